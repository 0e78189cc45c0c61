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

export function TopologyLine({ topology }: { topology: { clusters: number; pods: number; racks: number; nodes: number } }) {
  return (
    <p className="text-sm text-slate-700">
      <strong>{topology.nodes}</strong> node(s) on <strong>{topology.racks}</strong> rack(s) in <strong>{topology.pods}</strong> pod(s)
      {topology.clusters > 1 ? <> across <strong>{topology.clusters}</strong> clusters</> : null}
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
          className={cn("rounded px-2 py-1 text-xs ring-1", n.state && n.state !== "held" ? "bg-slate-50 text-slate-400 line-through ring-slate-200" : "bg-indigo-50 text-indigo-900 ring-indigo-200")}
          title={n.starts_at ? `${formatDateTime(n.starts_at)} – ${formatDateTime(n.ends_at)}` : undefined}
        >
          {n.hostname}
          {n.gpu_count ? <span className="ml-1 text-[10px] text-slate-500">{n.gpu_count} GPUs</span> : null}
          {n.state === "cut" ? <span className="ml-1"><Badge tone="amber">left service</Badge></span> : null}
        </li>
      )}
    />
  );
}
