import Link from "next/link";
import { cn } from "@/components/ui/cn";

// A timeline of reservations (the tenant's calendar, the operators' view of every booking): one
// row per reservation, its window drawn to scale against day ticks and a "now" line. Plain
// server-rendered markup; on a phone the chart scrolls sideways inside its card.

export interface TimelineRow {
  id: string;
  label: string;
  sublabel?: string;
  startsAt: string;
  endsAt: string;
  href?: string;
  /** palette slot, e.g. per tenant */
  color?: number;
  muted?: boolean;
  degraded?: boolean;
}

/** Tenants' colours: white text on each is at least 4.5:1 (WCAG AA), as the tenant floor prints names on them. */
export const PALETTE = [
  "bg-indigo-600",
  "bg-emerald-700",
  "bg-amber-700",
  "bg-sky-700",
  "bg-rose-600",
  "bg-violet-600",
  "bg-teal-700",
  "bg-orange-700",
];
export const PALETTE_SOFT = [
  "bg-indigo-100",
  "bg-emerald-100",
  "bg-amber-100",
  "bg-sky-100",
  "bg-rose-100",
  "bg-violet-100",
  "bg-teal-100",
  "bg-orange-100",
];

/** A palette slot per name, in name order: distinct for the first eight, the same on every chart of a page. */
export function paletteFor(names: Iterable<string>): Record<string, number> {
  return Object.fromEntries([...new Set(names)].sort().map((n, i) => [n, i % PALETTE.length]));
}

const dayFmt = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", timeZone: "UTC" });
const weekFmt = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
const hourFmt = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" });
const DAY = 86_400_000;

/**
 * The window a timeline shows: from the day before today to a day past the last reservation,
 * at least three days and at most about two months, so a two-hour booking is not a sliver.
 */
export function timelineWindow(rows: Array<{ endsAt: string }>, now = Date.now()): { from: number; to: number } {
  const from = Math.floor(now / DAY) * DAY - DAY;
  const last = Math.max(now, ...rows.map((r) => Date.parse(r.endsAt)));
  return { from, to: Math.min(Math.max(last + DAY, from + 3 * DAY), from + 62 * DAY) };
}

function tickStep(span: number): { step: number; label: (t: number) => string } {
  if (span <= 1.5 * DAY) return { step: 6 * 3_600_000, label: (t) => (t % DAY === 0 ? dayFmt.format(t) : hourFmt.format(t)) };
  if (span <= 4 * DAY) return { step: 12 * 3_600_000, label: (t) => (t % DAY === 0 ? dayFmt.format(t) : hourFmt.format(t)) };
  if (span <= 21 * DAY) return { step: DAY, label: (t) => dayFmt.format(t) };
  return { step: 7 * DAY, label: (t) => weekFmt.format(t) };
}

export function ReservationTimeline({
  from,
  to,
  rows,
  now = Date.now(),
  caption,
}: {
  from: number;
  to: number;
  rows: TimelineRow[];
  now?: number;
  caption: string;
}) {
  const span = to - from;
  const pct = (t: number) => Math.min(100, Math.max(0, ((t - from) / span) * 100));
  const { step, label } = tickStep(span);
  const ticks: number[] = [];
  for (let t = Math.ceil(from / step) * step; t < to; t += step) ticks.push(t);
  return (
    // focusable: on a phone it scrolls sideways, and keyboards must reach that too
    <figure className="overflow-x-auto p-5 focus-visible:outline-2 focus-visible:outline-indigo-600" aria-label={caption} tabIndex={0}>
      <figcaption className="sr-only">{caption}</figcaption>
      <div className="min-w-[36rem]">
        <div className="relative ml-32 h-6 border-b border-slate-200 text-[11px] text-slate-500 sm:ml-48">
          {ticks.map((t) => (
            <span key={t} className="absolute whitespace-nowrap pl-1" style={{ left: `${pct(t)}%` }}>
              {label(t)}
            </span>
          ))}
        </div>
        <ol className="relative">
          {rows
            .filter((r) => Date.parse(r.endsAt) > from && Date.parse(r.startsAt) < to)
            .map((r) => {
              const s = Date.parse(r.startsAt);
              const e = Date.parse(r.endsAt);
              const left = pct(s);
              const width = Math.max(0.6, pct(e) - left);
              const bar = (
                <span
                  className={cn(
                    "absolute top-1.5 h-5 rounded-sm ring-1 ring-inset ring-black/10",
                    r.muted ? "bg-slate-300" : PALETTE[(r.color ?? 0) % PALETTE.length],
                    r.degraded && "bg-[repeating-linear-gradient(45deg,#f59e0b_0_6px,#fbbf24_6px_12px)]",
                  )}
                  style={{ left: `${left}%`, width: `${width}%` }}
                  title={`${r.label}: ${r.startsAt} – ${r.endsAt}`}
                />
              );
              return (
                <li key={r.id} className="flex h-8 items-center border-b border-slate-100 last:border-0">
                  <span className="w-32 shrink-0 truncate pr-3 text-xs sm:w-48">
                    {r.href ? (
                      <Link href={r.href} className="font-medium text-indigo-700 hover:underline">
                        {r.label}
                      </Link>
                    ) : (
                      <span className="font-medium text-slate-800">{r.label}</span>
                    )}
                    {r.sublabel ? <span className="block truncate text-[11px] text-slate-500">{r.sublabel}</span> : null}
                  </span>
                  <span className="relative h-8 flex-1">
                    {ticks.map((t) => (
                      <span
                        key={t}
                        aria-hidden
                        className="absolute inset-y-0 border-l border-dashed border-slate-100"
                        style={{ left: `${pct(t)}%` }}
                      />
                    ))}
                    {bar}
                  </span>
                </li>
              );
            })}
          {now > from && now < to ? (
            <li aria-hidden className="pointer-events-none absolute inset-y-0 right-0 left-32 sm:left-48">
              <span className="absolute inset-y-0 w-px bg-red-500" style={{ left: `${pct(now)}%` }} />
            </li>
          ) : null}
        </ol>
        <p className="mt-2 ml-32 text-[11px] text-slate-500 sm:ml-48">
          Times in UTC. <span className="ml-2 inline-block h-2 w-3 bg-red-500 align-middle" /> now
          <span className="ml-3 inline-block h-2 w-3 bg-[repeating-linear-gradient(45deg,#f59e0b_0_3px,#fbbf24_3px_6px)] align-middle" />{" "}
          degraded
        </p>
      </div>
    </figure>
  );
}
