import Link from "next/link";
import { RANGE_KEYS, RANGE_PRESETS, toDateTimeLocal, type TimeRange } from "@/lib/metrics/time-range";

const control = "rounded-md bg-white px-2 py-1 text-sm text-slate-900 ring-1 ring-slate-300 focus:ring-2 focus:ring-indigo-600";

/**
 * The time range of a page's charts: presets as links (bookmarkable, keyboard-usable) and a custom
 * from–to in UTC, submitted as a plain GET form so it works before any script loads. `keep` are
 * other search parameters of the page that a new range must not drop.
 */
export function TimeRangePicker({ base, range, keep = {} }: { base: string; range: TimeRange; keep?: Record<string, string | undefined> }) {
  const kept = Object.entries(keep).filter((e): e is [string, string] => Boolean(e[1]));
  const href = (key: string) => `${base}?${new URLSearchParams([...kept, ["range", key]]).toString()}`;
  return (
    <div className="flex flex-wrap items-center gap-2" data-testid="time-range">
      <nav aria-label="Time range" className="flex rounded-md bg-slate-100 p-0.5 text-sm">
        {RANGE_KEYS.map((key) => (
          <Link
            key={key}
            href={href(key)}
            aria-current={range.key === key ? "true" : undefined}
            className="rounded px-2.5 py-1 font-medium text-slate-600 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-indigo-600 aria-[current=true]:bg-white aria-[current=true]:text-slate-900 aria-[current=true]:shadow-sm"
          >
            {RANGE_PRESETS[key].label}
          </Link>
        ))}
      </nav>
      <details className="group relative max-sm:open:basis-full" open={range.key === "custom" ? true : undefined}>
        <summary className="cursor-pointer list-none rounded-md px-2.5 py-1 text-sm font-medium text-slate-600 ring-1 ring-slate-300 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600 group-open:bg-slate-900 group-open:text-white group-open:ring-slate-900">
          Custom
        </summary>
        <form
          method="get"
          action={base}
          aria-label="Custom time range"
          className="mt-2 flex w-full flex-col gap-2 rounded-lg bg-white p-3 shadow-lg ring-1 ring-slate-200 sm:absolute sm:right-0 sm:z-20 sm:w-72"
        >
          {kept.map(([k, v]) => (
            <input key={k} type="hidden" name={k} value={v} />
          ))}
          <input type="hidden" name="range" value="custom" />
          <label className="text-xs font-medium text-slate-700" htmlFor="range-from">
            From (UTC)
          </label>
          <input
            id="range-from"
            name="from"
            type="datetime-local"
            required
            defaultValue={toDateTimeLocal(range.from)}
            className={control}
          />
          <label className="text-xs font-medium text-slate-700" htmlFor="range-to">
            To (UTC)
          </label>
          <input id="range-to" name="to" type="datetime-local" required defaultValue={toDateTimeLocal(range.to)} className={control} />
          <button className="mt-1 rounded-md bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-500 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600">
            Apply
          </button>
          <p className="text-xs text-slate-500">Up to 31 days. Longer ranges are drawn with longer steps.</p>
        </form>
      </details>
    </div>
  );
}
