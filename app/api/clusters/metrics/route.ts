import { fleet } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { ingestGpuMetrics } from "@/lib/metrics/ingest-gpu-metrics";

export const POST = route(fleet.postMetrics, async ({ principal, body }) => {
  const { accepted, stored, rejected } = await ingestGpuMetrics(principal, body.metrics);
  return json(202, { accepted, stored, rejected });
});
