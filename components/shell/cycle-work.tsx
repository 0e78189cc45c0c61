import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import type { CycleDecision } from "@/lib/jobs/scheduler-page";

/** What one scheduling cycle did, each piece of work linked to its page: placed, or left waiting and why. */
export function CycleWork({ decisions, considered }: { decisions: CycleDecision[]; considered: number }) {
  if (decisions.length === 0) return <span className="text-xs text-slate-500">Nothing waited</span>;
  const placed = decisions.filter((d) => d.outcome === "placed").length;
  return (
    <details className="text-xs">
      <summary className="cursor-pointer rounded font-medium text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-indigo-600">
        {placed} placed, {decisions.length - placed} left waiting
        {considered > decisions.length ? ` (the first ${decisions.length} of ${considered})` : ""}
      </summary>
      <ul className="mt-2 space-y-1.5">
        {decisions.map((d) => (
          <li key={d.id} className="flex flex-wrap items-baseline gap-x-2">
            <Badge tone={d.outcome === "placed" ? "green" : "amber"}>{d.outcome}</Badge>
            {d.kind === "unknown" ? (
              <span className="font-mono text-slate-500">{d.id.slice(0, 8)} (gone)</span>
            ) : (
              <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/${d.kind === "pod" ? "pods" : "jobs"}/${d.id}`}>
                {d.kind === "pod" ? `pod ${d.name}` : d.name}
              </Link>
            )}
            {d.tenant ? <span className="text-slate-500">{d.tenant}</span> : null}
            <span className="text-slate-600">{d.what}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
