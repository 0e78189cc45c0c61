import { fleet } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { gpuMetricSeries } from "@/lib/metrics/queries";

export const GET = route(fleet.getGpuMetrics, async ({ principal, params, query }) => json(200, await gpuMetricSeries(principal, params.id, query)));
