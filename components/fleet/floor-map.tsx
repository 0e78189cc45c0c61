import { cn } from "@/components/ui/cn";
import type { CellTone } from "@/lib/fleet/floor-code";
import type { PodSummary, RackSummary } from "@/lib/fleet/floor-summary";
import { TONES } from "./floor-tones";
import { RackTile } from "./rack-tile";

// The fleet floor at any scale: pods, their racks as tiles, each rack drawn compactly (a row per
// node, a cell per GPU) with the counts an operator scans for. Every rack is a link to its own
// page, where each node and GPU has its own link and label: one tab stop per rack here, not one
// per node, and a few hundred bytes per rack whatever its size.

const SMALL_FLEET_NODES = 64;
const NODE_TONES: CellTone[] = ["registered", "draining", "maintenance", "quarantined", "offline"];
/** Between tenants (released, wiped, inspected) or being provisioned: their own colours, and a count of their own. */
const HANDOVER_TONES: CellTone[] = ["provisioning", "releasing", "wiping", "inspecting", "attestation_failed"];
const LEGEND: CellTone[] = ["idle", "low", "mid", "high", "nodata", "unhealthy", ...NODE_TONES, ...HANDOVER_TONES];

export function FloorMap({ pods }: { pods: PodSummary[] }) {
  const racks = pods.flatMap((p) => p.racks);
  const nodes = racks.reduce((n, r) => n + r.nodes, 0);
  const size = nodes <= SMALL_FLEET_NODES ? "large" : "small";
  return (
    <div className="space-y-5">
      <FloorTotals racks={racks} />
      <Legend />
      {pods.map((pod) => (
        <section key={pod.key} aria-label={pod.title}>
          <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-500">
            {pod.title}{" "}
            <span className="font-normal normal-case tracking-normal text-slate-500">
              · {pod.racks.length} rack{pod.racks.length === 1 ? "" : "s"}
            </span>
          </h3>
          <ul className="flex flex-wrap gap-2">
            {pod.racks.map((r) => (
              <li key={r.rack}>
                <RackTile r={r} pod={pod.title} size={size} />
              </li>
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}

function FloorTotals({ racks }: { racks: RackSummary[] }) {
  const sum = (f: (r: RackSummary) => number) => racks.reduce((n, r) => n + f(r), 0);
  const out: Record<string, number> = {};
  for (const r of racks) for (const [k, v] of Object.entries(r.outOfService)) out[k] = (out[k] ?? 0) + v;
  const items: Array<[string, number, string?]> = [
    ["racks", racks.length],
    ["nodes", sum((r) => r.nodes)],
    ["GPUs", sum((r) => r.gpus)],
    ["busy ≥ 50 %", sum((r) => r.busyGpus)],
    ["unhealthy GPUs", sum((r) => r.unhealthyGpus), "text-red-700"],
    ...NODE_TONES.filter((k) => out[k]).map((k): [string, number] => [k, out[k]!]),
    ["in handover", HANDOVER_TONES.reduce((n, k) => n + (out[k] ?? 0), 0), "text-teal-700"],
    ...HANDOVER_TONES.filter((k) => out[k]).map((k): [string, number, string] => [
      TONES[k].label,
      out[k]!,
      k === "attestation_failed" ? "text-fuchsia-700" : "text-teal-700",
    ]),
    ["reserved nodes", sum((r) => r.reservedNodes), "text-violet-700"],
  ];
  return (
    <dl className="flex flex-wrap gap-x-5 gap-y-1 text-xs text-slate-600">
      {items.map(([label, n, tone]) => (
        <div key={label} className="flex items-baseline gap-1">
          <dt className="order-2">{label}</dt>
          <dd className={cn("order-1 font-semibold tabular-nums text-slate-900", n > 0 && tone)}>{n.toLocaleString("en-US")}</dd>
        </div>
      ))}
    </dl>
  );
}

function Legend() {
  return (
    <ul className="flex flex-wrap gap-x-4 gap-y-1.5 text-xs text-slate-600" aria-label="Legend">
      {LEGEND.map((t) => (
        <li key={t} className="flex items-center gap-1.5">
          <span aria-hidden className={cn("h-2.5 w-2.5 rounded-sm", TONES[t].bg)} />
          {NODE_TONES.includes(t) || HANDOVER_TONES.includes(t) ? `${TONES[t].label} node` : TONES[t].label}
        </li>
      ))}
      <li className="flex items-center gap-1.5">
        <span aria-hidden className="h-2.5 w-1 rounded-sm bg-violet-600" />
        reserved node
      </li>
    </ul>
  );
}
