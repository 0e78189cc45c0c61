import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import type { CapacityReport } from "@/lib/reservations/capacity";

// What is free in a window, per cluster, pod and rack: whole nodes (what a reservation books) and
// GPUs (what a job can take), next to what there is, and what is between tenants (released, wiped
// and inspected before it is back in service).

/** Nodes in their handover: their own colour, and nothing when there are none. */
function HandoverCount({ n }: { n: number }) {
  return n > 0 ? <Badge tone="teal">{n} in handover</Badge> : <span className="text-slate-400">0</span>;
}

export function CapacityView({ report }: { report: CapacityReport }) {
  if (report.clusters.length === 0) return <EmptyState title="No nodes of this type">Pick another GPU type.</EmptyState>;
  return (
    <Table caption={`Free capacity${report.gpu_type ? ` of ${report.gpu_type}` : ""} from ${report.from} to ${report.to}`}>
      <thead className="bg-slate-50">
        <tr>
          <Th>Cluster · pod · rack</Th>
          <Th className="text-right">Free whole nodes</Th>
          <Th className="text-right">Free GPUs</Th>
          <Th className="text-right">In service</Th>
          <Th className="text-right">In handover</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {report.clusters.flatMap((c) => [
          <tr key={c.cluster_id} className="bg-slate-50/60">
            <Td className="font-semibold text-slate-900">
              {c.cluster_name}
              {c.region ? <span className="ml-2 text-xs font-normal text-slate-500">{c.region}</span> : null}
            </Td>
            <Td className="text-right tabular-nums font-semibold">
              {c.free_nodes} / {c.nodes}
            </Td>
            <Td className="text-right tabular-nums font-semibold">
              {c.free_gpus} / {c.gpus}
            </Td>
            <Td className="text-right tabular-nums">{c.nodes_in_service}</Td>
            <Td className="text-right tabular-nums">
              <HandoverCount n={c.nodes_in_handover} />
            </Td>
          </tr>,
          ...c.pods.flatMap((p) =>
            p.racks.map((r) => (
              <tr key={`${c.cluster_id}/${p.pod}/${r.rack}`}>
                <Td className="pl-8 text-slate-600">
                  {p.pod ?? "no pod"} · {r.rack ?? "no rack"}
                </Td>
                <Td className="text-right tabular-nums">
                  {r.free_nodes === r.nodes && r.nodes > 0 ? (
                    <Badge tone="green">
                      {r.free_nodes} / {r.nodes} whole rack
                    </Badge>
                  ) : (
                    `${r.free_nodes} / ${r.nodes}`
                  )}
                </Td>
                <Td className="text-right tabular-nums">
                  {r.free_gpus} / {r.gpus}
                </Td>
                <Td className="text-right tabular-nums">{r.nodes_in_service}</Td>
                <Td className="text-right tabular-nums">
                  <HandoverCount n={r.nodes_in_handover} />
                </Td>
              </tr>
            )),
          ),
        ])}
      </tbody>
    </Table>
  );
}
