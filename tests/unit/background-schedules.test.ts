import { Cron } from "croner";
import { describe, expect, it } from "vitest";
import { backgroundJobs } from "@/lib/background/registry";

// Every background job's schedule is one the in-process driver can run: its everySeconds becomes a
// croner step of seconds (which must divide a minute's 60), else its cron. A schedule croner
// refuses stops the app's instrumentation hook, and with it every background job, at start.
describe("background schedules", () => {
  it("parse as the driver builds them", () => {
    const bad: string[] = [];
    for (const job of backgroundJobs) {
      const pattern = job.everySeconds ? `*/${job.everySeconds} * * * * *` : job.cron;
      if (!pattern) continue;
      try {
        new Cron(pattern, { paused: true, timezone: "UTC" }).stop();
      } catch (e) {
        bad.push(`${job.id}: ${pattern}: ${(e as Error).message}`);
      }
      if (job.everySeconds && job.everySeconds > 59) bad.push(`${job.id}: everySeconds ${job.everySeconds} is more than a minute`);
    }
    expect(bad).toEqual([]);
  });
});
