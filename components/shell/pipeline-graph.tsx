import Link from "next/link";
import { cn } from "@/components/ui/cn";

// A pipeline as columns by depth: every step sits one column right of its deepest dependency,
// with its dependencies listed, so fan-out and fan-in read left to right without a drawing library.

interface Step {
  name: string;
  dependsOn: string[];
  status: string;
  jobId: string | null;
  iteration: number;
  repeat: number;
  depth: number;
}

const tone: Record<string, string> = {
  waiting: "ring-slate-200 bg-white",
  running: "ring-indigo-300 bg-indigo-50",
  completed: "ring-emerald-300 bg-emerald-50",
  failed: "ring-red-300 bg-red-50",
  cancelled: "ring-slate-300 bg-slate-50 opacity-70",
};

export function PipelineGraph({ steps }: { steps: Step[] }) {
  const columns = Math.max(...steps.map((s) => s.depth)) + 1;
  return (
    <ol className="flex gap-6 overflow-x-auto p-5" aria-label="Pipeline steps by stage">
      {Array.from({ length: columns }, (_, d) => (
        <li key={d} className="min-w-52 space-y-3">
          <p className="text-xs font-semibold uppercase tracking-wide text-slate-500">Stage {d + 1}</p>
          {steps.filter((s) => s.depth === d).map((s) => (
            <div key={s.name} data-testid={`step-${s.name}`} className={cn("rounded-lg p-3 ring-1", tone[s.status] ?? tone.waiting)}>
              <p className="font-medium text-slate-900">{s.name}</p>
              <p className="text-xs text-slate-600">
                {s.status}
                {s.repeat > 1 ? ` · run ${Math.min(s.iteration + (s.status === "running" ? 1 : 0), s.repeat)} of ${s.repeat}` : ""}
              </p>
              {s.dependsOn.length ? <p className="mt-1 text-xs text-slate-500">after {s.dependsOn.join(", ")}</p> : null}
              {s.jobId ? <Link className="mt-1 inline-block text-xs font-medium text-indigo-700 hover:underline" href={`/dashboard/jobs/${s.jobId}`}>Job →</Link> : null}
            </div>
          ))}
        </li>
      ))}
    </ol>
  );
}
