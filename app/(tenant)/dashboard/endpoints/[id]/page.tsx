import { EndpointDetail } from "@/components/endpoints/endpoint-views";
import { EndpointWorkload } from "@/components/workloads/endpoint-workload";
import { publicUrl } from "@/lib/platform/public-url";
import { endpointPageData } from "@/lib/endpoints/endpoint-page";
import { fittingPreset, parseTimeRange } from "@/lib/metrics/time-range";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Endpoint" };

export default page(
  {
    plane: "tenant",
    path: "/dashboard/endpoints/[id]",
    ids: ["id"],
    load: async ({ principal, ids, searchParams }) => {
      const now = new Date();
      return endpointPageData(principal, ids.id, (createdAt) => parseTimeRange(searchParams, now, fittingPreset("24h", createdAt, now)));
    },
  },
  // a tenant knows whose endpoint it is
  ({ ids: { id }, searchParams: sp, data: { range, ...data } }) => (
    <>
      <EndpointDetail
        {...data}
        tenantName={undefined}
        range={range}
        basePath={`/dashboard/endpoints/${id}`}
        alertsHref="/dashboard/alerts"
        listHref="/dashboard/endpoints"
        listLabel="Endpoints"
        apiBase={publicUrl()}
        justCreated={sp.created === "1"}
      />
      <EndpointWorkload endpoint={data.endpoint} telemetry={data.gpuTelemetry} />
    </>
  ),
);
