import Link from "next/link";

/** Status filters of a list page as links (bookmarkable, keyboard-usable); the current one is marked. */
export function FilterTabs({
  label,
  base,
  param = "status",
  current,
  options,
}: {
  label: string;
  base: string;
  param?: string;
  current: string | undefined;
  options: Array<[value: string, label: string]>;
}) {
  return (
    <nav aria-label={label} className="flex gap-1 text-sm">
      {options.map(([value, text]) => (
        <Link
          key={value}
          href={value ? `${base}?${param}=${encodeURIComponent(value)}` : base}
          aria-current={(current ?? "") === value ? "page" : undefined}
          className="rounded-md px-2.5 py-1 text-slate-600 hover:bg-slate-100 aria-[current=page]:bg-slate-900 aria-[current=page]:text-white"
        >
          {text}
        </Link>
      ))}
    </nav>
  );
}

/** The footer link to the next (older) page of a keyset-paginated list. */
export function OlderLink({ href, label = "Older →" }: { href: string | null; label?: string }) {
  if (!href) return null;
  return (
    <div className="border-t border-slate-100 px-5 py-3 text-right">
      <Link className="text-sm font-medium text-indigo-700 hover:underline" href={href}>
        {label}
      </Link>
    </div>
  );
}
