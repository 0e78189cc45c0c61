import Link from "next/link";
import { cn } from "@/components/ui/cn";

// The "fleet floor": every node and GPU, grouped by pod and rack, coloured by state. Plain
// server-rendered markup (one small span per GPU, one link per node) keeps 10,000 GPUs cheap.

interface Gpu {
  index: number;
  status: string;
  util: number | null;
}
interface Node {
  id: string;
  hostname: string;
  status: string;
  gpus: Gpu[];
}
interface Rack {
  cluster: string;
  pod: string;
  rack: string;
  nodes: Node[];
}

function gpuClass(g: Gpu, nodeStatus: string): string {
  if (g.status === "unhealthy") return "bg-red-500";
  if (nodeStatus === "offline") return "bg-slate-300";
  if (g.util === null) return "bg-slate-200";
  if (g.util < 10) return "bg-emerald-100";
  if (g.util < 50) return "bg-emerald-300";
  if (g.util < 80) return "bg-emerald-500";
  return "bg-emerald-700";
}

const nodeRing: Record<string, string> = {
  available: "ring-slate-200",
  registered: "ring-sky-300",
  draining: "ring-amber-300",
  maintenance: "ring-slate-400",
  quarantined: "ring-red-400 ring-2",
  offline: "ring-slate-300 opacity-60",
};

export function FleetFloor({ racks }: { racks: Rack[] }) {
  const pods = new Map<string, Rack[]>();
  for (const r of racks) pods.set(`${r.cluster}\u0000${r.pod}`, [...(pods.get(`${r.cluster}\u0000${r.pod}`) ?? []), r]);
  const manyClusters = new Set(racks.map((r) => r.cluster)).size > 1;
  return (
    <div className="space-y-5">
      <Legend />
      {[...pods.entries()].map(([key, podRacks]) => {
        const { cluster, pod } = podRacks[0]!;
        const title = manyClusters ? `${cluster} · pod ${pod}` : `Pod ${pod}`;
        return (
        <section key={key} aria-label={title}>
          <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-500">{title}</h3>
          <div className="flex flex-wrap gap-3">
            {podRacks.map((rack) => (
              <div key={rack.rack} className="rounded-md bg-slate-50 p-2 ring-1 ring-slate-200">
                <p className="mb-1.5 text-[11px] font-medium text-slate-500">Rack {rack.rack}</p>
                <div className="flex flex-col gap-1">
                  {rack.nodes.map((n) => {
                    const unhealthy = n.gpus.filter((g) => g.status === "unhealthy").length;
                    const busy = n.gpus.filter((g) => (g.util ?? 0) >= 50).length;
                    return (
                      <Link
                        key={n.id}
                        href={`/admin/nodes/${n.id}`}
                        aria-label={`${n.hostname}: ${n.status}, ${n.gpus.length} GPUs, ${busy} busy, ${unhealthy} unhealthy`}
                        title={`${n.hostname} · ${n.status}`}
                        className={cn("flex gap-0.5 rounded bg-white p-0.5 ring-1 hover:ring-indigo-500", nodeRing[n.status] ?? "ring-slate-200")}
                      >
                        {n.gpus.length === 0 ? <span className="h-2.5 w-10 rounded-sm bg-slate-100" /> : null}
                        {n.gpus.map((g) => (
                          <span key={g.index} className={cn("h-2.5 w-2.5 rounded-sm", gpuClass(g, n.status))} />
                        ))}
                      </Link>
                    );
                  })}
                </div>
              </div>
            ))}
          </div>
        </section>
        );
      })}
    </div>
  );
}

function Legend() {
  const items: Array<[string, string]> = [
    ["bg-emerald-100", "< 10 %"],
    ["bg-emerald-300", "10–50 %"],
    ["bg-emerald-500", "50–80 %"],
    ["bg-emerald-700", "≥ 80 %"],
    ["bg-slate-200", "no data"],
    ["bg-red-500", "unhealthy GPU"],
  ];
  return (
    <ul className="flex flex-wrap gap-4 text-xs text-slate-600" aria-label="Legend">
      {items.map(([cls, label]) => (
        <li key={label} className="flex items-center gap-1.5"><span aria-hidden className={cn("h-2.5 w-2.5 rounded-sm", cls)} />{label}</li>
      ))}
      <li className="flex items-center gap-1.5"><span aria-hidden className="h-3 w-5 rounded ring-2 ring-red-400" />quarantined node</li>
      <li className="flex items-center gap-1.5"><span aria-hidden className="h-3 w-5 rounded opacity-60 ring-1 ring-slate-300" />offline node</li>
    </ul>
  );
}
