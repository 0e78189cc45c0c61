import { fleet } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { gpuMetricSeries } from "@/lib/metrics/queries";

export const GET = route(fleet.getGpuMetrics, async ({ principal, params, query, reply }) =>
  reply(200, await gpuMetricSeries(principal, params.id, query)),
);
