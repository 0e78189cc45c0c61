"use client";
import Link from "next/link";
import { CELL_TONES, decodeRack, type CellTone } from "@/lib/fleet/floor-code";
import { describeRack, type RackSummary } from "@/lib/fleet/floor-summary";
import { TONES } from "./floor-tones";

// One rack of the overview's floor, drawn as a rack stands: a row per node, a cell per GPU, a
// violet bar before a node a reservation holds. A client component so that the page's React
// payload carries the rack's few letters per node and counts, not its drawing: the drawing is in
// the HTML once, drawn from them on the server and again when the browser hydrates. Runs of equal
// cells are one dashed line, so a whole busy node is one short path command.

export const CELL = { small: { w: 5, h: 4, gap: 1 }, large: { w: 11, h: 8, gap: 2 } } as const;
const MARK = 3;

export function rackPaths(
  code: string,
  size: keyof typeof CELL,
): { width: number; height: number; paths: Array<[CellTone | "reserved", string]> } {
  const { w, h, gap } = CELL[size];
  const nodes = decodeRack(code);
  const byTone = new Map<CellTone | "reserved", string[]>();
  const add = (tone: CellTone | "reserved", d: string) => byTone.set(tone, [...(byTone.get(tone) ?? []), d]);
  let maxCells = 0;
  nodes.forEach((n, row) => {
    const y = row * (h + gap) + h / 2;
    if (n.reserved) add("reserved", `M0 ${y}h${MARK - 1}`);
    maxCells = Math.max(maxCells, n.cells.length);
    for (let i = 0; i < n.cells.length;) {
      let j = i;
      while (j < n.cells.length && n.cells[j] === n.cells[i]) j++;
      add(n.cells[i]!, `M${MARK + i * (w + gap)} ${y}h${(j - i) * (w + gap) - gap}`);
      i = j;
    }
  });
  const order: Array<CellTone | "reserved"> = ["reserved", ...CELL_TONES];
  return {
    width: MARK + Math.max(8, maxCells) * (w + gap) - gap,
    height: Math.max(1, nodes.length) * (h + gap) - gap,
    paths: order.filter((t) => byTone.has(t)).map((t) => [t, byTone.get(t)!.join("")]),
  };
}

export function RackTile({ r, pod, size }: { r: RackSummary; pod: string; size: keyof typeof CELL }) {
  const { w, h, gap } = CELL[size];
  const { width, height, paths } = rackPaths(r.code, size);
  const out = Object.values(r.outOfService).reduce((a, b) => a + b, 0);
  const alarm = r.unhealthyGpus > 0 || (r.outOfService.quarantined ?? 0) > 0;
  return (
    <Link href={r.href} title={describeRack(r, pod)} className={alarm ? "rack-tile rack-tile-alarm" : "rack-tile"}>
      <span className="rack-head">
        <span>{r.rack}</span>
        {r.unhealthyGpus ? (
          <span className="font-semibold text-red-700">
            {`${r.unhealthyGpus}✕`}
            <span className="sr-only"> unhealthy GPUs</span>
          </span>
        ) : out ? (
          <span>
            {`${out}↓`}
            <span className="sr-only"> nodes out of service</span>
          </span>
        ) : null}
      </span>
      {/* stroke width and dashes are inherited: set once per rack, not per path */}
      <svg aria-hidden width={width} height={height} strokeWidth={h} strokeDasharray={`${w} ${gap}`} className="block">
        {paths.map(([tone, d]) => (
          <path key={tone} d={d} className={tone === "reserved" ? "ft-reserved" : TONES[tone].stroke} />
        ))}
      </svg>
    </Link>
  );
}
