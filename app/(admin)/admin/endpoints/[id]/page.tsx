import { notFound } from "next/navigation";
import { EndpointDetail } from "@/components/endpoints/endpoint-views";
import { EndpointWorkload } from "@/components/workloads/endpoint-workload";
import { requireOperatorPage } from "@/lib/auth/session";
import { publicUrl } from "@/lib/platform/public-url";
import { endpointPageData } from "@/lib/endpoints/endpoint-page";
import { parseTimeRange } from "@/lib/metrics/time-range";

export const metadata = { title: "Endpoint" };

export default async function AdminEndpointPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | undefined>> }) {
  const { id } = await params;
  const p = await requireOperatorPage(`/admin/endpoints/${id}`);
  const range = parseTimeRange(await searchParams, new Date(), "24h");
  const data = await endpointPageData(p, id, range);
  if (!data) notFound();
  return (
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
  );
}
