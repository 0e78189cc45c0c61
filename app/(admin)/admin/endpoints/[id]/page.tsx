import { EndpointDetail } from "@/components/endpoints/endpoint-views";
import { EndpointWorkload } from "@/components/workloads/endpoint-workload";
import { publicUrl } from "@/lib/platform/public-url";
import { endpointPageData } from "@/lib/endpoints/endpoint-page";
import { fittingPreset, parseTimeRange } from "@/lib/metrics/time-range";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Endpoint" };

export default page(
  {
    plane: "operator",
    path: "/admin/endpoints/[id]",
    ids: ["id"],
    load: async ({ principal, ids, searchParams }) => {
      const now = new Date();
      return endpointPageData(principal, ids.id, (createdAt) => parseTimeRange(searchParams, now, fittingPreset("24h", createdAt, now)));
    },
  },
  ({ ids: { id }, data: { range, ...data } }) => (
    <>
      <EndpointDetail
        {...data}
        range={range}
        basePath={`/admin/endpoints/${id}`}
        alertsHref={data.slaAlert.firing ? `/admin/alerts?alert=${data.slaAlert.firing.id}` : "/admin/alerts"}
        listHref="/admin/endpoints"
        listLabel="Endpoints"
        apiBase={publicUrl()}
      />
      <EndpointWorkload endpoint={data.endpoint} telemetry={data.gpuTelemetry} />
    </>
  ),
);
