import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { appendJobLogs, truncationMarker } from "@/lib/workload-logs/append-logs";
import { actorFor, agentPrincipal, availableFleet, makeTenant, placementOf, tenantAdminPrincipal } from "../support/fixtures";

// Job log chunks are stored by group commit (lib/workload-logs/ingest-job-logs.ts): the requests
// that arrive while a group is being stored go together in the next one. What each request is
// told, and what is stored, must be what one request at a time would have given.

async function runningJob() {
  const { cluster, gpuType } = await availableFleet(1, 1);
  const t = await makeTenant(1);
  const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
    name: "loud",
    gpu_count: 1,
    gpu_type: gpuType,
    priority: 1,
    max_retries: 0,
    image: "alpine:3.20",
    command: "yes",
  });
  await runSchedulerCycle("test: a job that prints");
  return { job, agent: agentPrincipal(cluster.id), placement: await placementOf(job.id) };
}

const chunks = (from: number, n: number, text: string) =>
  Array.from({ length: n }, (_, i) => ({ seq: from + i, stream: "stdout" as const, text }));

describe("job logs stored in groups", () => {
  it("parallel batches that pass the cap together: one marker at the first chunk past it, nothing after, every chunk once", async () => {
    const { job, agent, placement } = await runningJob();
    const cap = env().WORKLOAD_LOG_MAX_BYTES;
    const line = `${"x".repeat(16_000)}\n`;
    const fit = Math.floor(cap / Buffer.byteLength(line));
    const batches = Math.ceil((fit + 150) / 100);
    // every batch at once, one of them twice (an agent re-sending while the first is in flight)
    const sent = [...Array.from({ length: batches }, (_, k) => chunks(k * 100, 100, line)), chunks(100, 100, line)];
    const answers = await Promise.all(sent.map((c) => appendJobLogs(agent, job.id, { ...placement, chunks: c })));
    for (const [i, a] of answers.entries()) expect(a.accepted).toBe(sent[i]!.length);
    // the chunks that fit, and the marker in place of the first that did not
    expect(answers.reduce((n, a) => n + a.stored, 0)).toBe(fit + 1);
    expect(answers.some((a) => a.truncated)).toBe(true);
    const rows = await db().workloadLog.findMany({
      where: { jobId: job.id },
      orderBy: { seq: "asc" },
      select: { seq: true, stream: true, text: true },
    });
    // which chunks fit depends on the order the parallel batches arrived in (as for one request at a
    // time: the first chunk past the cap becomes the marker); what holds whatever that order was:
    expect(new Set(rows.map((r) => r.seq)).size).toBe(rows.length); // every chunk once
    const markers = rows.filter((r) => r.stream === "system");
    expect(markers).toEqual([{ seq: markers[0]!.seq, stream: "system", text: truncationMarker(cap) }]);
    const stored = rows.filter((r) => r.stream === "stdout");
    expect(stored).toHaveLength(fit);
    expect(stored.every((r) => r.text === line)).toBe(true);
    const p = await db().jobPlacement.findUniqueOrThrow({ where: { jobId_attempt: { jobId: job.id, attempt: placement.attempt } } });
    expect({ bytes: Number(p.logBytes), truncated: p.logTruncated }).toEqual({ bytes: fit * Buffer.byteLength(line), truncated: true });
    // what comes later is acknowledged and dropped, so the agent stops resending
    expect(await appendJobLogs(agent, job.id, { ...placement, chunks: chunks(batches * 100, 3, "late\n") })).toEqual({
      accepted: 3,
      stored: 0,
      truncated: true,
    });
  });

  it("keeps each request's answer its own when a group mixes placements, stale fences and jobs the agent never ran", async () => {
    const a = await runningJob();
    const b = await runningJob();
    const [ok, stale, foreign, again] = await Promise.allSettled([
      appendJobLogs(a.agent, a.job.id, { ...a.placement, chunks: chunks(0, 10, "a\n") }),
      appendJobLogs(a.agent, a.job.id, { attempt: a.placement.attempt, fence: b.placement.fence, chunks: chunks(0, 1, "?\n") }),
      // b's job, with a's agent key: another cluster's
      appendJobLogs(a.agent, b.job.id, { ...b.placement, chunks: chunks(0, 1, "?\n") }),
      appendJobLogs(b.agent, b.job.id, { ...b.placement, chunks: chunks(0, 5, "b\n") }),
    ]);
    expect(ok).toEqual({ status: "fulfilled", value: { accepted: 10, stored: 10, truncated: false } });
    expect(stale).toMatchObject({ status: "rejected", reason: { code: "stale_report" } });
    expect(foreign).toMatchObject({ status: "rejected", reason: { code: "not_found" } });
    expect(again).toEqual({ status: "fulfilled", value: { accepted: 5, stored: 5, truncated: false } });
    expect(await db().workloadLog.count({ where: { jobId: a.job.id } })).toBe(10);
    expect(await db().workloadLog.count({ where: { jobId: b.job.id } })).toBe(5);
  });
});
