import { cn } from "@/components/ui/cn";

// A pipeline drawn as a graph: one column per depth, an arrow from each dependency, and a dashed
// arrow back from each loop's last step to its first. Plain SVG from plain props, so the editor's
// live preview (client) and the pipeline page (server) draw the same picture.

export interface DagNode {
  name: string;
  kind: string;
  dependsOn: string[];
  depth: number;
  status?: string;
  /** e.g. "iteration 2 of ≤ 4" */
  detail?: string;
  loop?: { from: string; label: string } | null;
  href?: string;
}

const W = 176;
const H = 58;
const GX = 64;
const GY = 22;
const PAD = 16;

const fill: Record<string, string> = {
  waiting: "fill-white stroke-slate-300",
  running: "fill-indigo-50 stroke-indigo-500",
  completed: "fill-emerald-50 stroke-emerald-500",
  failed: "fill-red-50 stroke-red-500",
  cancelled: "fill-slate-100 stroke-slate-400",
  skipped: "fill-slate-50 stroke-slate-300",
};
const kindLabel: Record<string, string> = { job: "GPU job", http: "http call", inference: "inference" };

/** `fit`: scale down to the width available (the editor's preview) instead of scrolling. */
export function PipelineDag({ nodes, label, fit = false }: { nodes: DagNode[]; label: string; fit?: boolean }) {
  if (!nodes.length) return <p className="p-5 text-sm text-slate-500">No steps yet.</p>;
  const columns = new Map<number, DagNode[]>();
  for (const n of nodes) columns.set(n.depth, [...(columns.get(n.depth) ?? []), n]);
  const pos = new Map<string, { x: number; y: number }>();
  const maxRows = Math.max(...[...columns.values()].map((c) => c.length));
  for (const [d, col] of columns) {
    const offset = ((maxRows - col.length) * (H + GY)) / 2;
    col.forEach((n, i) => pos.set(n.name, { x: PAD + d * (W + GX), y: PAD + 26 + offset + i * (H + GY) }));
  }
  const width = PAD * 2 + (Math.max(...columns.keys()) + 1) * (W + GX) - GX;
  const loops = nodes.filter((n) => n.loop && pos.has(n.loop.from));
  const height = PAD * 2 + 26 + maxRows * (H + GY) - GY + (loops.length ? 34 : 0);
  const bottom = height - PAD - 6;
  return (
    <div className="overflow-x-auto">
      <svg
        role="img"
        aria-label={label}
        width={fit ? undefined : width}
        height={fit ? undefined : height}
        viewBox={`0 0 ${width} ${height}`}
        style={fit ? { maxWidth: width } : undefined}
        className={cn("block text-slate-700", fit && "h-auto w-full")}
      >
        <defs>
          <marker id="dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" className="fill-slate-400" />
          </marker>
          <marker id="dag-loop" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" className="fill-amber-500" />
          </marker>
        </defs>
        {[...columns.keys()].map((d) => (
          <text key={d} x={PAD + d * (W + GX)} y={PAD + 10} className="fill-slate-500 text-[10px] font-semibold uppercase tracking-wide">
            Stage {d + 1}
          </text>
        ))}
        {nodes.flatMap((n) =>
          n.dependsOn
            .filter((d) => pos.has(d))
            .map((d) => {
              const a = pos.get(d)!;
              const b = pos.get(n.name)!;
              const x1 = a.x + W;
              const y1 = a.y + H / 2;
              const x2 = b.x - 2;
              const y2 = b.y + H / 2;
              return (
                <path
                  key={`${d}->${n.name}`}
                  d={`M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}`}
                  fill="none"
                  strokeWidth={1.5}
                  className="stroke-slate-300"
                  markerEnd="url(#dag-arrow)"
                />
              );
            }),
        )}
        {loops.map((n, i) => {
          const end = pos.get(n.name)!;
          const start = pos.get(n.loop!.from)!;
          const y = bottom - i * 4;
          const x1 = end.x + W / 2;
          const x2 = start.x + W / 2;
          const d =
            n.loop!.from === n.name
              ? `M${x1 + 30},${end.y + H} C${x1 + 30},${y} ${x1 - 30},${y} ${x1 - 30},${end.y + H + 2}`
              : `M${x1},${end.y + H} L${x1},${y} L${x2},${y} L${x2},${start.y + H + 2}`;
          return (
            <g key={`loop-${n.name}`} data-testid={`loop-${n.name}`}>
              <path d={d} fill="none" strokeWidth={1.5} strokeDasharray="5 4" className="stroke-amber-500" markerEnd="url(#dag-loop)" />
              <text x={Math.min(x1, x2) + 6} y={y - 4} className="fill-amber-700 text-[10px] font-medium">
                ↺ {n.loop!.label}
              </text>
            </g>
          );
        })}
        {nodes.map((n) => {
          const p = pos.get(n.name)!;
          const box = (
            <g key={n.name} data-testid={`step-${n.name}`} data-status={n.status ?? "waiting"}>
              <title>{`${n.name} (${kindLabel[n.kind] ?? n.kind})${n.status ? `: ${n.status}` : ""}${n.detail ? ` · ${n.detail}` : ""}`}</title>
              <rect
                x={p.x}
                y={p.y}
                width={W}
                height={H}
                rx={8}
                strokeWidth={1.5}
                className={cn(fill[n.status ?? "waiting"] ?? fill.waiting, n.status === "running" && "animate-pulse")}
              />
              <text x={p.x + 10} y={p.y + 19} className="fill-slate-900 text-[12px] font-semibold">
                {n.name.length > 22 ? `${n.name.slice(0, 21)}…` : n.name}
              </text>
              <text x={p.x + 10} y={p.y + 34} className="fill-slate-500 text-[10px]">
                {kindLabel[n.kind] ?? n.kind}
                {n.status ? ` · ${n.status}` : ""}
              </text>
              {n.detail ? (
                <text x={p.x + 10} y={p.y + 48} className="fill-slate-500 text-[10px]">
                  {n.detail.length > 30 ? `${n.detail.slice(0, 29)}…` : n.detail}
                </text>
              ) : null}
            </g>
          );
          return n.href ? (
            <a key={n.name} href={n.href} aria-label={`${n.name}: ${n.status ?? ""}`}>
              {box}
            </a>
          ) : (
            box
          );
        })}
      </svg>
    </div>
  );
}
