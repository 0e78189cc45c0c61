import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import type { NodeJob, NodeReplica } from "@/lib/fleet/node-impact";

/** The jobs and endpoint replicas holding a node's GPUs, each linked to its page. */
export function NodeWorkloadTable({ workload }: { workload: { jobs: NodeJob[]; replicas: NodeReplica[] } }) {
  if (workload.jobs.length === 0 && workload.replicas.length === 0)
    return (
      <EmptyState title="Nothing runs on this node">
        Its GPUs are free; the scheduler places queued work here while it is available.
      </EmptyState>
    );
  return (
    <Table caption="Work running on this node">
      <thead className="bg-slate-50">
        <tr>
          <Th>Kind</Th>
          <Th>Name</Th>
          <Th>Tenant</Th>
          <Th className="text-right">GPUs here</Th>
          <Th>Since</Th>
          <Th>Note</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {workload.jobs.map((j) => (
          <tr key={j.id}>
            <Td>
              <Badge tone="indigo">job</Badge>
            </Td>
            <Td className="font-medium">
              <Link className="text-indigo-700 hover:underline" href={`/admin/jobs/${j.id}`}>
                {j.name}
              </Link>
            </Td>
            <Td>{j.tenant}</Td>
            <Td className="text-right tabular-nums">
              {j.gpusHere}
              {j.gpusTotal > j.gpusHere ? ` of ${j.gpusTotal}` : ""}
            </Td>
            <Td>{formatRelative(j.startedAt)}</Td>
            <Td className="text-xs text-slate-600">{j.durationS ? `time limit ${Math.round(j.durationS / 60)} min` : "no time limit"}</Td>
          </tr>
        ))}
        {workload.replicas.map((r) => (
          <tr key={r.id}>
            <Td>
              <Badge tone="sky">replica</Badge>
            </Td>
            <Td className="font-medium">
              <Link className="text-indigo-700 hover:underline" href={`/admin/endpoints/${r.endpointId}`}>
                {r.endpoint}
              </Link>{" "}
              <code className="text-xs text-slate-500">{r.id.slice(0, 8)}</code>
            </Td>
            <Td>{r.tenant}</Td>
            <Td className="text-right tabular-nums">{r.gpusHere}</Td>
            <Td>—</Td>
            <Td className="text-xs text-slate-600">{r.status}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
