import Link from "next/link";
import { cn } from "@/components/ui/cn";
import { Table, Td, Th } from "@/components/ui/table";
import { decodeNode, encodeNode } from "@/lib/fleet/floor-code";
import { StatusBadge } from "./node-status-badge";
import { TONES } from "./floor-tones";

// One rack's nodes in full: a row per node with a labelled cell per GPU, for the rack page the
// overview's floor drills into (a rack is tens of nodes, so an element per GPU is cheap here).

interface Gpu {
  index: number;
  status: string;
  util: number | null;
  allocated: boolean;
}
interface Node {
  id: string;
  hostname: string;
  status: string;
  reservedBy: string | null;
  gpus: Gpu[];
}

function gpuLabel(g: Gpu): string {
  const state = g.status === "unhealthy" ? "unhealthy" : g.util === null ? "no data" : `${g.util} %`;
  return `GPU ${g.index}: ${state}${g.allocated ? ", allocated" : ""}`;
}

export function RackNodes({ nodes }: { nodes: Node[] }) {
  return (
    <Table caption="Nodes of this rack">
      <thead className="bg-slate-50">
        <tr>
          <Th>Node</Th>
          <Th>Status</Th>
          <Th>GPUs</Th>
          <Th className="text-right">Busy (≥ 50 %)</Th>
          <Th className="text-right">Unhealthy</Th>
          <Th>Reserved by</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {nodes.map((n) => {
          const { cells } = decodeNode(encodeNode(n));
          return (
            <tr key={n.id} className="hover:bg-slate-50">
              <Td>
                <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/nodes/${n.id}`}>
                  {n.hostname}
                </Link>
              </Td>
              <Td>
                <StatusBadge status={n.status} />
              </Td>
              <Td>
                <ul className="flex gap-0.5" aria-label={`GPUs of ${n.hostname}`}>
                  {n.gpus.length === 0 ? <li className="text-xs text-slate-500">none reported</li> : null}
                  {n.gpus.map((g, i) => (
                    <li
                      key={g.index}
                      title={gpuLabel(g)}
                      className={cn("h-3.5 w-3.5 rounded-sm", TONES[cells[i]!].bg, g.allocated && "ring-1 ring-inset ring-slate-900/40")}
                    >
                      <span className="sr-only">{gpuLabel(g)}</span>
                    </li>
                  ))}
                </ul>
              </Td>
              <Td className="text-right tabular-nums">{n.gpus.filter((g) => (g.util ?? 0) >= 50).length}</Td>
              <Td className={cn("text-right tabular-nums", n.gpus.some((g) => g.status === "unhealthy") && "font-semibold text-red-700")}>
                {n.gpus.filter((g) => g.status === "unhealthy").length}
              </Td>
              <Td>{n.reservedBy ?? <span className="text-slate-400">—</span>}</Td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}
