import { cn } from "@/components/ui/cn";
import { formatDateTime } from "@/components/ui/format";

// One pipeline's timeline: what happened to which step, in which iteration, with the figures that
// matter (a tool call's HTTP status and duration, an output's size, a retry's wait).

interface Entry {
  id: string;
  kind: string;
  step: string | null;
  iteration: number | null;
  message: string;
  details: Record<string, unknown> | null;
  at: string;
}

const tone: Record<string, string> = {
  submitted: "bg-slate-100 text-slate-700",
  transition: "bg-indigo-50 text-indigo-700",
  iteration: "bg-amber-50 text-amber-800",
  output: "bg-emerald-50 text-emerald-700",
  tool_call: "bg-sky-50 text-sky-700",
  retry: "bg-orange-50 text-orange-700",
  control: "bg-red-50 text-red-700",
  deadline: "bg-red-50 text-red-700",
};

export function WorkflowLog({ entries }: { entries: Entry[] }) {
  if (!entries.length) return <p className="px-5 py-3 text-sm text-slate-500">Nothing yet.</p>;
  return (
    <ol className="divide-y divide-slate-100" data-testid="workflow-log">
      {entries.map((e) => (
        <li key={e.id} className="flex flex-col gap-1 px-5 py-2 text-sm sm:flex-row sm:items-center sm:justify-between sm:gap-4">
          <span className="flex min-w-0 flex-wrap items-center gap-2">
            <span
              className={cn("rounded px-1.5 py-0.5 text-[10px] font-semibold uppercase tracking-wide", tone[e.kind] ?? tone.transition)}
            >
              {e.kind.replace("_", " ")}
            </span>
            {e.step ? <code className="rounded bg-slate-100 px-1.5 text-xs">{e.step}</code> : null}
            {e.iteration !== null && e.iteration > 0 ? <span className="text-xs text-slate-500">iteration {e.iteration + 1}</span> : null}
            <span className="min-w-0 break-words">{e.message}</span>
          </span>
          <time className="shrink-0 text-xs text-slate-500" dateTime={e.at}>
            {formatDateTime(new Date(e.at))}
          </time>
        </li>
      ))}
    </ol>
  );
}
