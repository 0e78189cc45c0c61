import { workloads } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { endpointGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";

export const GET = route(workloads.endpointGpuMetrics, async ({ principal, params, query }) => json(200, await endpointGpuTelemetry(principal, params.id, query)));
