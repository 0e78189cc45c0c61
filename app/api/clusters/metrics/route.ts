import { fleet } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { ingestGpuMetrics } from "@/lib/metrics/ingest-gpu-metrics";

export const POST = route(fleet.postMetrics, async ({ principal, body, reply }) => {
  const { accepted, stored, rejected } = await ingestGpuMetrics(principal, body.metrics);
  return reply(202, { accepted, stored, rejected });
});
