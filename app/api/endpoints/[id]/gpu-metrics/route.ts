import { workloads } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { endpointGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";

export const GET = route(workloads.endpointGpuMetrics, async ({ principal, params, query, reply }) =>
  reply(200, await endpointGpuTelemetry(principal, params.id, query)),
);
