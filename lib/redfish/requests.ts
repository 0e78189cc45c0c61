import type { RedfishClient, Resource } from "./client";
import { RedfishError } from "./errors";
import { redfishMessages, retryAfterMs, strongEtag, type QuirkId } from "./quirks";
import { isTask, odataId, taskOutcome, type Json } from "./resources";
import type { Answer } from "./transport";

// The requests that change a BMC, on top of the client's single request (RedfishClient.call):
// PATCH with the ETag it read (and sushy's answers to BMCs whose ETags misbehave), POST an action,
// and a 202's task followed through its monitor (DSP0266: the monitor answers 202 while the task
// runs, then the operation's own outcome), all at once or one look at a time.

/** A 202's task as a workflow keeps it between visits: the monitor, the Task (when named), what started it. */
export interface TaskRef {
  monitor: string;
  task?: string;
  what: string;
  polls: number;
  quirk?: QuirkId;
}

export type TaskPoll = { state: "running"; retryAfterMs: number; ref: TaskRef } | { state: "done"; answer: Answer };

const ok = (status: number) => status >= 200 && status < 300;

/** What a 202 points at: the monitor to poll, and the Task when the answer names it. Plain JSON: a workflow keeps it between visits. */
export function taskRef(accepted: Answer, what: string): TaskRef {
  const task = isTask(accepted.json) ? odataId(accepted.json) : undefined;
  const monitor = accepted.headers.location ?? task;
  if (!monitor) throw new RedfishError("bad_answer", `${what}: 202 Accepted without a Location to follow`, { status: 202 });
  return { monitor, ...(task ? { task } : {}), what, polls: 0 };
}

/**
 * One look at a task: still running (and when to look next), or done with the operation's own
 * answer. A task that ended badly throws task_failed with the BMC's messages.
 */
export async function pollTask(c: RedfishClient, ref: TaskRef): Promise<TaskPoll> {
  const a = await c.call("GET", ref.monitor, undefined, ref.quirk ? { quirk: ref.quirk } : {});
  const next = (r: TaskRef): TaskPoll => ({
    state: "running",
    retryAfterMs: retryAfterMs(a.headers["retry-after"], c.timings.maxBackoffMs) ?? c.timings.taskPollMs,
    ref: { ...r, polls: r.polls + 1 },
  });
  if (a.status === 202) return next(isTask(a.json) && !ref.task ? { ...ref, task: odataId(a.json) } : ref);
  if (a.status === 404 && (ref.polls > 0 || ref.task)) {
    // the monitor went away once the task ended: the Task resource (when we know it) says how
    if (ref.task && ref.task !== ref.monitor) {
      const o = taskOutcome((await c.get(ref.task, "task_monitor_gone")).json);
      if (o.state === "failed") throw new RedfishError("task_failed", `${ref.what}: ${o.why}`, { path: ref.task });
      if (o.state === "running") return next({ ...ref, quirk: "task_monitor_gone" });
    }
    return { state: "done", answer: { ...a, status: 204, json: undefined, text: "" } };
  }
  if (isTask(a.json)) {
    const o = taskOutcome(a.json);
    if (o.state === "running") return next({ ...ref, quirk: "task_monitor_is_task" });
    if (o.state === "failed") throw new RedfishError("task_failed", `${ref.what}: ${o.why}`, { status: a.status, path: ref.monitor });
    return { state: "done", answer: a };
  }
  if (!ok(a.status)) {
    const m = redfishMessages(a.json);
    throw new RedfishError(
      a.status === 401 || a.status === 403 ? "credentials_refused" : "task_failed",
      `${ref.what}: the task ended with HTTP ${a.status}${m.text ? `, ${m.text}` : ""}`,
      { status: a.status, messageIds: m.ids, path: ref.monitor },
    );
  }
  return { state: "done", answer: a };
}

/** Follows a 202's task to its end (within the client's task timeout); any other answer as it is. */
async function settle(c: RedfishClient, a: Answer, method: string, path: string): Promise<Answer> {
  if (a.status !== 202) return a;
  const what = `${method} ${path}`;
  let ref = taskRef(a, what);
  const deadline = Date.now() + c.timings.taskTimeoutMs;
  let wait = retryAfterMs(a.headers["retry-after"], c.timings.maxBackoffMs) ?? c.timings.taskPollMs;
  for (;;) {
    if (Date.now() + wait > deadline)
      throw new RedfishError(
        "timeout",
        `${what}: the task at ${ref.monitor} did not finish within ${Math.round(c.timings.taskTimeoutMs / 1000)} s`,
      );
    await c.pause(wait);
    const p = await pollTask(c, ref);
    if (p.state === "done") return p.answer;
    ref = p.ref;
    wait = p.retryAfterMs;
  }
}

/** POST an action; a 202 is followed to its outcome. Any non-success is left to the caller to judge. */
export async function postAction(c: RedfishClient, path: string, body?: Json, quirk?: QuirkId): Promise<Answer> {
  return settle(c, await c.call("POST", path, body, quirk ? { quirk } : {}), "POST", path);
}

/**
 * PATCH with If-Match when we hold an ETag, with sushy's answers to BMCs whose ETags misbehave:
 * a weak ETag repeated strong, a stale one re-read, one that never matches dropped; 428 without
 * an ETag repeated with If-Match: *.
 */
export async function patchResource(c: RedfishClient, resource: Resource, body: Json, why?: QuirkId): Promise<Answer> {
  const path = resource.path;
  const send = (etag: string | undefined, quirk?: QuirkId) =>
    c.call("PATCH", path, body, { ...(etag ? { headers: { "if-match": etag } } : {}), ...(quirk ? { quirk } : {}) });
  let etag = resource.etag;
  let a = await send(etag, why);
  if (a.status === 428 && !etag) a = await send("*", "if_match_required");
  if (a.status === 412 && etag) {
    const strong = strongEtag(etag);
    if (strong) a = await send(strong, "weak_etag_rejected");
    if (a.status === 412) {
      etag = (await c.get(path, "stale_etag")).etag;
      if (etag) a = await send(etag, "stale_etag");
      if (a.status === 412) a = await send(undefined, "etag_never_matches");
    }
  }
  return settle(c, a, "PATCH", path);
}
