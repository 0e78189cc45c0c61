import { cron } from "inngest";
import { readBackgroundEvent } from "@/lib/background/events";
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
      triggers: [...(job.cron ? [cron(job.cron)] : []), ...(job.events ?? []).map((name) => inngestEvents[name])],
    },
    async ({ event, step }) => {
      // a cron tick (inngest/scheduled.timer) carries no event of ours: the job runs as a sweep
      const ev = readBackgroundEvent(event);
      // a durable job makes its own steps (each tool call one, memoized and retried by Inngest);
      // Inngest hands a memoized result back as JSON, which DurableStep's results are (see its doc)
      if (job.durable)
        return job.run({ event: ev, step: { run: <T>(id: string, fn: () => Promise<T>) => step.run(id, fn) as Promise<T> } });
      return step.run(job.id, () => job.run({ event: ev }));
    },
  ),
);
