import { EmptyState } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";

interface Entry {
  id: bigint | string;
  action: string;
  targetType: string;
  details: unknown;
  createdAt: Date;
}

export function AuditList({ entries, empty = "Nothing has happened yet." }: { entries: Entry[]; empty?: string }) {
  if (entries.length === 0) return <EmptyState title={empty} />;
  return (
    <ul className="divide-y divide-slate-100">
      {entries.map((e) => {
        const by = (e.details as { by?: string } | null)?.by ?? "system";
        return (
          <li key={String(e.id)} className="flex items-center justify-between gap-4 px-5 py-3 text-sm">
            <span>
              <span className="font-mono text-xs text-indigo-700">{e.action}</span>
              <span className="ml-2 text-slate-600">by {by}</span>
            </span>
            <time className="shrink-0 text-xs text-slate-500" dateTime={e.createdAt.toISOString()}>
              {formatRelative(e.createdAt)}
            </time>
          </li>
        );
      })}
    </ul>
  );
}
