import { cron } from "inngest";
import { backgroundJobs } from "@/lib/background/registry";
import { inngest, inngestEvents } from "../client";

// One Inngest function per background job: the trigger list and the step both come from the
// shared registry, so what Inngest runs is exactly what the in-process driver would run.
export const functions = backgroundJobs.map((job) =>
  inngest.createFunction(
    {
      id: job.id,
      name: job.description,
      concurrency: { limit: 1 },
      ...(job.debounceMs ? { debounce: { period: `${Math.max(1, Math.round(job.debounceMs / 1000))}s` } } : {}),
      triggers: [
        ...(job.cron ? [cron(job.cron)] : []),
        ...(job.events ?? []).map((name) => inngestEvents[name]),
      ],
    },
    async ({ event, step }) => {
      const ev = event?.name?.startsWith("inngest/") ? undefined : (event as never);
      // a durable job makes its own steps (each tool call one, memoized and retried by Inngest)
      if (job.durable) return job.run({ event: ev, step: { run: (id, fn) => step.run(id, fn) as never } });
      return step.run(job.id, () => job.run({ event: ev }));
    },
  ),
);
