import { notFound } from "next/navigation";
import { EndpointDetail } from "@/components/endpoints/endpoint-views";
import { EndpointWorkload } from "@/components/workloads/endpoint-workload";
import { requireTenantPage } from "@/lib/auth/session";
import { publicUrl } from "@/lib/billing/invoices";
import { endpointPageData } from "@/lib/endpoints/endpoint-page";

export const metadata = { title: "Endpoint" };

export default async function TenantEndpointPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const p = await requireTenantPage(`/dashboard/endpoints/${id}`);
  const data = await endpointPageData(p, id);
  if (!data) notFound();
  // a tenant knows whose endpoint it is
  return (
    <>
      <EndpointDetail {...data} tenantName={undefined} listHref="/dashboard/endpoints" listLabel="Endpoints" apiBase={publicUrl()} />
      <EndpointWorkload endpoint={data.endpoint} telemetry={data.gpuTelemetry} />
    </>
  );
}
