import Link from "next/link";
import { buttonClass } from "./button";

const control = "rounded-md bg-white px-2.5 py-1.5 text-sm text-slate-900 ring-1 ring-slate-300 focus:ring-2 focus:ring-indigo-600";

export interface SelectFilter {
  name: string;
  label: string;
  options: Array<[value: string, label: string]>;
}

/**
 * A list's filters as one GET form (search, selects, a date range, sort): the address carries the
 * whole view, so it can be bookmarked, shared and exported as it is. Works without JavaScript.
 */
export function ListToolbar({
  label,
  base,
  values,
  search,
  selects = [],
  dates,
  sort,
  exportHref,
}: {
  label: string;
  base: string;
  values: Record<string, unknown>;
  search?: string;
  selects?: SelectFilter[];
  dates?: string;
  sort?: Array<[value: string, label: string]>;
  exportHref?: string;
}) {
  const key = label.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  const v = (k: string) => (values[k] === undefined || values[k] === null ? "" : String(values[k] as string | number));
  const filtered = [search ? "q" : null, ...selects.map((s) => s.name), dates ? "from" : null, dates ? "to" : null].some((k) => k && v(k));
  return (
    <form
      method="get"
      action={base}
      role="search"
      aria-label={label}
      className="flex flex-wrap items-end gap-2 border-b border-slate-100 px-5 py-3"
    >
      {search ? (
        <div className="flex min-w-48 flex-1 flex-col gap-1">
          <label htmlFor={`${key}-q`} className="text-xs font-medium text-slate-600">
            Search
          </label>
          <input id={`${key}-q`} name="q" type="search" defaultValue={v("q")} placeholder={search} className={control} maxLength={100} />
        </div>
      ) : null}
      {selects.map((s) => (
        <div key={s.name} className="flex flex-col gap-1">
          <label htmlFor={`${key}-${s.name}`} className="text-xs font-medium text-slate-600">
            {s.label}
          </label>
          <select id={`${key}-${s.name}`} name={s.name} defaultValue={v(s.name)} className={control}>
            {s.options.map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </div>
      ))}
      {dates ? (
        <fieldset className="flex items-end gap-1">
          <legend className="sr-only">{dates}</legend>
          <div className="flex flex-col gap-1">
            <label htmlFor={`${key}-from`} className="text-xs font-medium text-slate-600">
              {dates} from
            </label>
            <input id={`${key}-from`} name="from" type="date" defaultValue={v("from")} className={control} />
          </div>
          <div className="flex flex-col gap-1">
            <label htmlFor={`${key}-to`} className="text-xs font-medium text-slate-600">
              to
            </label>
            <input id={`${key}-to`} name="to" type="date" defaultValue={v("to")} className={control} />
          </div>
        </fieldset>
      ) : null}
      {sort ? (
        <div className="flex flex-col gap-1">
          <label htmlFor={`${key}-sort`} className="text-xs font-medium text-slate-600">
            Sort
          </label>
          <select id={`${key}-sort`} name="sort" defaultValue={v("sort")} className={control}>
            {sort.map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      {values.per_page && values.per_page !== 50 ? (
        <input type="hidden" name="per_page" value={String(values.per_page as string | number)} />
      ) : null}
      <button className={buttonClass("primary", "md", "bg-slate-900 hover:bg-slate-700")}>Apply</button>
      {filtered ? (
        <Link href={base} className="px-1 py-2 text-sm text-slate-600 hover:underline">
          Clear
        </Link>
      ) : null}
      {exportHref ? (
        <a href={exportHref} download className={buttonClass("secondary", "md", "ml-auto")}>
          Export CSV
        </a>
      ) : null}
    </form>
  );
}

/** "21–40 of 312" with previous / next, and the page size. */
export function Pager({
  page,
  perPage,
  total,
  href,
}: {
  page: number;
  perPage: number;
  total: number;
  href: (changes: Record<string, number>) => string;
}) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  const first = total === 0 ? 0 : (page - 1) * perPage + 1;
  const last = Math.min(total, page * perPage);
  const link = "rounded-md px-2.5 py-1 text-sm font-medium text-indigo-700 ring-1 ring-slate-200 hover:bg-slate-50";
  const off = "rounded-md px-2.5 py-1 text-sm text-slate-500 ring-1 ring-slate-100";
  return (
    <nav
      aria-label="Pages"
      className="flex flex-wrap items-center justify-between gap-3 border-t border-slate-100 px-5 py-3 text-sm text-slate-600"
    >
      <p data-testid="list-range">
        {total === 0
          ? "Nothing to show"
          : `${first.toLocaleString("en-US")}–${last.toLocaleString("en-US")} of ${total.toLocaleString("en-US")}`}
      </p>
      <div className="flex items-center gap-2">
        <span className="text-xs">Per page:</span>
        {[25, 50, 100].map((n) =>
          n === perPage ? (
            <span key={n} aria-current="true" className="rounded bg-slate-900 px-2 py-0.5 text-xs text-white">
              {n}
            </span>
          ) : (
            <Link key={n} href={href({ per_page: n, page: 1 })} className="rounded px-2 py-0.5 text-xs text-indigo-700 hover:bg-slate-100">
              {n}
            </Link>
          ),
        )}
        <span className="mx-1 h-4 w-px bg-slate-200" aria-hidden />
        {page > 1 ? (
          <Link href={href({ page: page - 1 })} className={link} rel="prev">
            ← Previous
          </Link>
        ) : (
          <span className={off} aria-disabled="true">
            ← Previous
          </span>
        )}
        <span className="tabular-nums">
          Page {page} of {pages}
        </span>
        {page < pages ? (
          <Link href={href({ page: page + 1 })} className={link} rel="next">
            Next →
          </Link>
        ) : (
          <span className={off} aria-disabled="true">
            Next →
          </span>
        )}
      </div>
    </nav>
  );
}
