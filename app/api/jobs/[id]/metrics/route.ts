import { workloads } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { jobGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";

export const GET = route(workloads.jobGpuMetrics, async ({ principal, params, query, reply }) =>
  reply(200, await jobGpuTelemetry(principal, params.id, query)),
);
