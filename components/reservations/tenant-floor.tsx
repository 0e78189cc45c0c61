import { cn } from "@/components/ui/cn";
import { PodRacks } from "./pod-racks";
import { PALETTE, PALETTE_SOFT } from "./timeline";

// The fleet floor by tenant: every node, grouped by cluster, pod and rack, filled with the colour
// of the tenant whose reservation holds it now, tinted with the colour of a tenant whose work runs
// on it, outlined when a reservation books it later, and greyed when it is out of service.

interface FloorNode {
  node_id: string;
  hostname: string;
  cluster: string;
  pod: string | null;
  rack: string | null;
  status: string;
  gpus: number;
  reserved_by: string | null;
  used_by: string[];
  booked_from: string | null;
}

export function TenantFloor({ nodes, colors }: { nodes: FloorNode[]; colors: Record<string, number> }) {
  const colorOf = (tenant: string) => colors[tenant] ?? 0;
  const tenants = [...new Set(nodes.flatMap((n) => [n.reserved_by, ...n.used_by]).filter((t): t is string => Boolean(t)))].sort();
  return (
    <div className="space-y-4 p-5">
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-600" aria-label="Legend">
        {tenants.map((t) => (
          <li key={t} className="flex items-center gap-1.5">
            <span className={cn("inline-block h-3 w-3 rounded-sm", PALETTE[colorOf(t)])} />
            {t} (reserved)
            <span className={cn("ml-1 inline-block h-3 w-3 rounded-sm", PALETTE_SOFT[colorOf(t)])} />
            using
          </li>
        ))}
        <li className="flex items-center gap-1.5">
          <span className="inline-block h-3 w-3 rounded-sm bg-white outline-2 outline-dashed outline-slate-400" />
          booked later
        </li>
        <li className="flex items-center gap-1.5">
          <span className="inline-block h-3 w-3 rounded-sm bg-slate-300" />
          out of service
        </li>
      </ul>
      <PodRacks
        className="grid gap-4 md:grid-cols-2 xl:grid-cols-3"
        items={nodes}
        pod={(n) => `${n.cluster} · ${n.pod ?? "no pod"}`}
        rack={(n) => n.rack ?? "no rack"}
        node={(n) => {
          const out = n.status !== "available";
          const tone = out
            ? "bg-slate-300 text-slate-600"
            : n.reserved_by
              ? cn(PALETTE[colorOf(n.reserved_by)], "text-white")
              : n.used_by[0]
                ? cn(PALETTE_SOFT[colorOf(n.used_by[0])], "text-slate-800")
                : "bg-white text-slate-600";
          const who = [
            n.reserved_by ? `reserved by ${n.reserved_by}` : null,
            n.used_by.length ? `used by ${n.used_by.join(", ")}` : null,
            n.booked_from ? `booked from ${n.booked_from}` : null,
            out ? n.status : null,
          ]
            .filter(Boolean)
            .join("; ");
          return (
            <li
              key={n.node_id}
              title={`${n.hostname}: ${who || "free"}`}
              className={cn(
                "rounded px-1.5 py-1 text-[10px] font-medium ring-1 ring-slate-200",
                tone,
                n.booked_from && "outline-2 outline-offset-1 outline-dashed outline-slate-500",
              )}
            >
              {n.hostname.replace(/^sim-/, "")}
              <span className="sr-only">: {who || "free"}</span>
            </li>
          );
        }}
      />
    </div>
  );
}
