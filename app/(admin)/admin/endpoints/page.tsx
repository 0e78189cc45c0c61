import Link from "next/link";
import { EndpointsTable } from "@/components/endpoints/endpoint-views";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { db } from "@/lib/db/client";
import { endpointSlaSummaries } from "@/lib/endpoints/endpoint-page";
import { endpointJson } from "@/lib/endpoints/endpoint-json";
import { listEndpoints } from "@/lib/endpoints/list-endpoints";
import { replicaHoldings } from "@/lib/endpoints/list-replica-holdings";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Endpoints" };

export default page({ plane: "operator", path: "/admin/endpoints" }, async ({ principal: p, searchParams: sp }) => {
  const [list, holdings, tenants] = await Promise.all([
    listEndpoints(p, { limit: 500 }),
    replicaHoldings(),
    db().tenant.findMany({ select: { id: true, name: true } }),
  ]);
  const endpoints = list.data.map(endpointJson);
  const sla = await endpointSlaSummaries(p, endpoints);
  const alerting = [...sla.values()].filter((x) => x.alert).length;
  const gpus = holdings.reduce((s, h) => s + h.gpu_indexes.length, 0);
  return (
    <>
      <PageHeader
        title="Inference endpoints"
        description="Every tenant's endpoints, their health, and the GPUs their replicas hold."
        actions={<AutoRefresh seconds={5} />}
      />
      {sp.deleted ? (
        <p role="status" className="mb-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900 ring-1 ring-emerald-200">
          “{sp.deleted.slice(0, 100)}” deleted; its replicas stopped and its GPUs are free.
        </p>
      ) : null}
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-5">
        <Stat label="Endpoints" value={endpoints.length} hint={`${endpoints.filter((e) => e.status === "ready").length} ready`} />
        <Stat
          label="Degraded or failed"
          value={endpoints.filter((e) => e.status === "degraded" || e.status === "failed").length}
          hint="Replicas missing now"
        />
        <Link
          href="/admin/alerts?rule_type=sla_breach&status=firing"
          className="rounded-lg focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
        >
          <Stat
            label="SLA alerts firing"
            value={<span className={alerting ? "text-red-700" : undefined}>{alerting}</span>}
            hint="Targets missed over the alert window"
          />
        </Link>
        <Stat label="Live replicas" value={holdings.length} />
        <Stat label="GPUs held by replicas" value={gpus} />
      </div>
      <Card className="mt-6">
        <CardHeader title="Endpoints" />
        <EndpointsTable
          endpoints={endpoints}
          hrefBase="/admin/endpoints"
          tenantNames={new Map(tenants.map((t) => [t.id, t.name]))}
          sla={sla}
          alertHref={(id) => `/admin/alerts?alert=${id}`}
        />
      </Card>
      <Card className="mt-6">
        <CardHeader title="GPUs held by replicas" description="By cluster and node: which endpoint's replica holds which GPUs." />
        {holdings.length === 0 ? (
          <EmptyState title="No replica holds a GPU right now" />
        ) : (
          <Table caption="GPUs held by endpoint replicas">
            <thead className="bg-slate-50">
              <tr>
                <Th>Cluster</Th>
                <Th>Node</Th>
                <Th>GPUs</Th>
                <Th>Endpoint</Th>
                <Th>Tenant</Th>
                <Th>Replica</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {holdings.map((h) => (
                <tr key={h.replica_id}>
                  <Td>{h.cluster_name}</Td>
                  <Td>{h.hostname}</Td>
                  <Td className="tabular-nums">
                    {h.gpu_indexes.map((i) => `GPU ${i}`).join(", ")} <span className="text-xs text-slate-500">({h.gpu_type})</span>
                  </Td>
                  <Td>
                    <Link className="text-indigo-700 hover:underline" href={`/admin/endpoints/${h.endpoint_id}`}>
                      {h.endpoint_name}
                    </Link>
                  </Td>
                  <Td>{h.tenant_name}</Td>
                  <Td>
                    <code className="mr-2 text-xs">{h.replica_id.slice(0, 8)}</code>
                    <Badge tone={h.status === "ready" ? "green" : h.status === "unhealthy" ? "amber" : "sky"}>{h.status}</Badge>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
});
