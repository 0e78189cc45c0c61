import { notFound } from "next/navigation";
import { EndpointDetail } from "@/components/endpoints/endpoint-views";
import { EndpointWorkload } from "@/components/workloads/endpoint-workload";
import { requireTenantPage } from "@/lib/auth/session";
import { publicUrl } from "@/lib/platform/public-url";
import { endpointPageData } from "@/lib/endpoints/endpoint-page";
import { parseTimeRange } from "@/lib/metrics/time-range";

export const metadata = { title: "Endpoint" };

export default async function TenantEndpointPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | undefined>> }) {
  const { id } = await params;
  const p = await requireTenantPage(`/dashboard/endpoints/${id}`);
  const sp = await searchParams;
  const range = parseTimeRange(sp, new Date(), "24h");
  const data = await endpointPageData(p, id, range);
  if (!data) notFound();
  // a tenant knows whose endpoint it is
  return (
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
  );
}
