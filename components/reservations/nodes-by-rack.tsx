import { Badge } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { formatDateTime } from "@/components/ui/format";
import { PodRacks } from "./pod-racks";

// The nodes a reservation (or a job) holds, grouped as the interconnect groups them: pod, then
// rack. The topology line above says how spread they are.

interface HeldNode {
  node_id: string;
  hostname: string;
  pod: string | null;
  rack: string | null;
  gpu_count?: number;
  state?: "held" | "cut" | "dropped";
  starts_at?: string;
  ends_at?: string;
}

const count = (n: number, one: string, many: string) => (
  <>
    <strong>{n}</strong> {n === 1 ? one : many}
  </>
);

/** How spread out a set of nodes is: nodes, racks, pods (and clusters when more than one). */
export function TopologyLine({
  topology,
  located = true,
}: {
  topology: { clusters: number; pods: number; racks: number; nodes: number };
  located?: boolean;
}) {
  if (!located) {
    return (
      <p className="text-sm text-slate-700">
        {count(topology.nodes, "node", "nodes")}, with no rack or pod recorded: placement cannot keep them close until an operator records
        where they stand.
      </p>
    );
  }
  return (
    <p className="text-sm text-slate-700">
      {count(topology.nodes, "node", "nodes")} on {count(topology.racks, "rack", "racks")} in {count(topology.pods, "pod", "pods")}
      {topology.clusters > 1 ? <> across {count(topology.clusters, "cluster", "clusters")}</> : null}
    </p>
  );
}

export function NodesByRack({ nodes }: { nodes: HeldNode[] }) {
  return (
    <PodRacks
      items={nodes}
      pod={(n) => n.pod ?? "no pod"}
      rack={(n) => n.rack ?? "no rack"}
      node={(n) => (
        <li
          key={`${n.node_id}${n.starts_at ?? ""}`}
          className={cn(
            "rounded px-2 py-1 text-xs ring-1",
            n.state && n.state !== "held"
              ? "bg-slate-50 text-slate-400 line-through ring-slate-200"
              : "bg-indigo-50 text-indigo-900 ring-indigo-200",
          )}
          title={n.starts_at ? `${formatDateTime(n.starts_at)} – ${formatDateTime(n.ends_at)}` : undefined}
        >
          {n.hostname}
          {n.gpu_count ? <span className="ml-1 text-[10px] text-slate-600">{n.gpu_count} GPUs</span> : null}
          {n.state === "cut" ? (
            <span className="ml-1">
              <Badge tone="amber">left service</Badge>
            </span>
          ) : null}
        </li>
      )}
    />
  );
}
