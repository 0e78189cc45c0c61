import { workloads } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { podGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";

export const GET = route(workloads.podGpuMetrics, async ({ principal, params, query, reply }) =>
  reply(200, await podGpuTelemetry(principal, params.id, query)),
);
