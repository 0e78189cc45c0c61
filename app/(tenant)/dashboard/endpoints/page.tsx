import { createEndpointAction } from "@/app/_actions/endpoints";
import { EndpointsTable } from "@/components/endpoints/endpoint-views";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { CreateEndpointForm } from "@/components/forms/endpoint-forms";
import { Card, CardHeader, PageHeader, Stat } from "@/components/ui/card";
import { endpointSlaSummaries } from "@/lib/endpoints/endpoint-page";
import { endpointJson } from "@/lib/endpoints/endpoint-json";
import { listEndpoints } from "@/lib/endpoints/list-endpoints";
import { listRates } from "@/lib/billing/rates";
import { fleetGpuTypes } from "@/lib/jobs/queries";
import { getTenantOrThrow, tenantFigures } from "@/lib/tenants/queries";
import { page } from "@/lib/pages/page";
import { GpusInUseStat } from "@/components/workloads/gpus-in-use";
import { buttonClass } from "@/components/ui/button";

export const metadata = { title: "Endpoints" };

export default page({ plane: "tenant", path: "/dashboard/endpoints" }, async ({ principal: p, searchParams: sp }) => {
  const [list, types, tenant, figures, rates] = await Promise.all([
    listEndpoints(p, { limit: 200 }),
    fleetGpuTypes(),
    getTenantOrThrow(p, p.tenantId),
    tenantFigures(p.tenantId),
    listRates(),
  ]);
  const endpoints = list.data.map(endpointJson);
  const sla = await endpointSlaSummaries(p, endpoints);
  const serving = endpoints.filter((e) => e.status === "ready" || e.status === "scaling" || e.status === "degraded");
  return (
    <>
      <PageHeader
        title="Inference endpoints"
        description="Models served from replicas on the fleet's GPUs, kept healthy and scaled within your quota, measured against your SLA."
        actions={
          <div className="flex flex-wrap items-center gap-3">
            <a className={buttonClass("primary")} href="#create-endpoint">
              Create an endpoint
            </a>
            <AutoRefresh seconds={5} />
          </div>
        }
      />
      {sp.deleted ? (
        <p role="status" className="mb-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900 ring-1 ring-emerald-200">
          “{sp.deleted.slice(0, 100)}” deleted; its replicas stopped and its GPUs are free.
        </p>
      ) : null}
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <Stat label="Endpoints" value={endpoints.length} hint={`${serving.length} serving`} />
        <Stat
          label="Replicas ready"
          value={endpoints.reduce((s, e) => s + e.ready_replicas, 0)}
          hint={`of ${endpoints.reduce((s, e) => s + (e.stopped ? 0 : e.replicas), 0)} wanted`}
        />
        <Stat label="Degraded or failed" value={endpoints.filter((e) => e.status === "degraded" || e.status === "failed").length} />
        <GpusInUseStat figures={figures} quota={tenant.gpuQuota} />
      </div>
      <Card className="mt-6">
        <CardHeader title="Your endpoints" description="Newest first." />
        <EndpointsTable endpoints={endpoints} hrefBase="/dashboard/endpoints" sla={sla} alertHref={() => "/dashboard/alerts"} />
      </Card>
      <Card className="mt-6" id="create-endpoint">
        <CardHeader
          title="Create an endpoint"
          description="Replicas are placed on distinct nodes where possible; each turns ready on its first healthy sample."
        />
        <CreateEndpointForm
          action={createEndpointAction}
          gpuTypes={types}
          rates={Object.fromEntries(rates.map((r) => [r.gpu_type, r.cents_per_hour]))}
        />
      </Card>
    </>
  );
});
