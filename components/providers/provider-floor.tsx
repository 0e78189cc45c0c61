import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Table, Td, Th } from "@/components/ui/table";
import { formatCents } from "@/lib/billing/money";
import type { ProviderFloorNode } from "@/lib/providers/provider-floor";
import { PROVIDER_LABELS } from "@/lib/providers/vocabulary";

/** Provider clusters on the fleet floor: each rented node with its provider, region, what it runs and its hourly cost. */
export function ProviderFloor({ nodes }: { nodes: ProviderFloorNode[] }) {
  return (
    <Table caption="Nodes rented from GPU providers">
      <thead className="bg-slate-50">
        <tr>
          <Th>Cluster</Th>
          <Th>Node</Th>
          <Th>Status</Th>
          <Th className="text-right">GPUs</Th>
          <Th>Running</Th>
          <Th className="text-right">Cost / h</Th>
          <Th className="text-right">Price / h</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {nodes.map((n) => (
          <tr key={n.instanceId}>
            <Td>
              <Link className="text-indigo-700 hover:underline" href={`/admin/clusters/${n.clusterId}`}>
                {n.cluster}
              </Link>
              <span className="block text-xs text-slate-500">
                {PROVIDER_LABELS[n.provider]} · {n.region}
              </span>
            </Td>
            <Td>
              {n.nodeId ? (
                <Link className="font-mono text-xs text-indigo-700 hover:underline" href={`/admin/nodes/${n.nodeId}`}>
                  {n.hostname}
                </Link>
              ) : (
                <span className="text-xs text-slate-500">—</span>
              )}
            </Td>
            <Td>
              <Badge tone={n.status === "running" ? "green" : n.status === "terminating" ? "amber" : "sky"}>{n.status}</Badge>
            </Td>
            <Td className="text-right tabular-nums">
              {n.gpuCount}× {n.gpuType}
            </Td>
            <Td>
              {n.jobId ? (
                <Link className="text-indigo-700 hover:underline" href={`/admin/jobs/${n.jobId}`}>
                  job {n.jobId.slice(0, 8)}
                </Link>
              ) : (
                <span className="text-xs text-slate-500">idle</span>
              )}
            </Td>
            <Td className="text-right tabular-nums">{formatCents(n.costCentsPerHour)}</Td>
            <Td className="text-right tabular-nums">{formatCents(n.priceCentsPerHour)}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
