import "server-only";
import { randomUUID } from "node:crypto";
import type { DurableStep } from "@/lib/background/types";
import { db, pool } from "@/lib/db/client";
import { lockForTransaction } from "@/lib/db/locks";
import { run, runOne, type RowOf } from "@/lib/db/statement";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import type { Cidr } from "@/lib/http/client-address";
import { backoffSeconds } from "@/lib/jobs/job-lifecycle";
import { logger } from "@/lib/logger";
import { secretValues } from "@/lib/secrets/secrets";
import { oneOf } from "@/lib/vocabulary";
import { advanceInTx, latestOutputs, logEvents, resolveRequest, wake, type ResolvedRequest } from "../advance-pipeline";
import { hostAllowed } from "../allow-list";
import {
  CLAIM_DUE_CALLS,
  INACTIVE_TENANTS,
  LOCK_CALL_STEP,
  LOCK_PIPELINE_FOR_RESULT,
  PIPELINE_STARTER_RIGHTS,
  RECORD_CALL_OUTPUT,
} from "../statements";
import { ExpressionError, SecretReference, type Json } from "../expressions";
import { failedCall, readResponse, type CallResult } from "./call-result";
import { gatewayTransport, NoReplica, type InferenceTransport } from "./inference-transport";
import { OutboundRefused, pinnedRequest, resolveDestination } from "./outbound";
import { redactJson, redactText } from "./redact";

// The background workers' side of tool-call steps (http, inference). Calls are claimed fairly
// across tenants (CLAIM_DUE_CALLS: round-robin, at most TOOL_CALLS_PER_TENANT in flight per
// tenant across every worker) under a lease, made each with its timeout, and recorded in one
// transaction that names the call's fence: a result for a step that was cancelled, retried,
// re-leased or taken back by a suspension meanwhile changes nothing. A worker in this process keeps
// up to TOOL_CALL_CONCURRENCY calls going and claims more as soon as any finishes (or every half
// second), so a slow server holds up its own tenant's calls only. Failures that may pass (timeouts,
// network errors, 5xx/429 by default) are retried with the step's backoff.
//
// Secrets (issue 27): an expression never holds one (lib/pipelines/expressions.ts); the request is
// resolved, its host checked against the allow-list and its addresses against the public internet
// (outbound.ts) with no secret in it; the secrets its headers name are used only while whom the
// pipeline acts for may use them; their values go into the headers as the request leaves, and the
// answer is stored with every secret sent, and every run of one, masked. A call that sent a secret
// never quotes the server's error body.

export interface ToolCallOptions {
  allowedHosts?: string[];
  /** networks beyond the public internet that http steps may reach (TOOL_CALL_ALLOWED_NETWORKS) */
  allowedNetworks?: Cidr[];
  maxOutputBytes?: number;
  transport?: InferenceTransport;
  /** calls this worker keeps going at once (TOOL_CALL_CONCURRENCY) */
  concurrency?: number;
  /** calls one tenant may have in flight across every worker (TOOL_CALLS_PER_TENANT) */
  perTenant?: number;
  /** Inngest's step tools when it runs the worker: each call is then a durable step */
  step?: DurableStep;
}

/** The tool-call steps' kinds (a job step is never claimed here). */
const CALL_KINDS = ["http", "inference"] as const;

type Claimed = Omit<RowOf<typeof CLAIM_DUE_CALLS>, "kind"> & { kind: (typeof CALL_KINDS)[number] };
type Outcome = "completed" | "failed" | "retried" | "discarded";

/** How often a worker with calls in flight looks for newly due ones, and for tenants suspended meanwhile. */
const REFILL_MS = 500;

export async function runDueToolCalls(opts: ToolCallOptions = {}) {
  const outcomes: Outcome[] = [];
  let claimedCount = 0;
  const concurrency = opts.concurrency ?? env().TOOL_CALL_CONCURRENCY;
  const perTenant = opts.perTenant ?? env().TOOL_CALLS_PER_TENANT;
  if (opts.step) {
    // Inngest: one fair batch, each call a durable step; a new run (the next event, the cron)
    // goes on beside a slow one, so nothing waits on it but its own tenant's calls
    const step = opts.step;
    const claimed = await step.run("claim-due-calls", () => claimDueCalls(concurrency, perTenant));
    claimedCount = claimed.length;
    outcomes.push(
      ...(await Promise.all(
        claimed.map((c) => step.run(`call-${c.id}-${c.call_attempt}-${c.call_fence.slice(0, 8)}`, () => callAndRecord(c, opts))),
      )),
    );
  } else {
    const inFlight = new Map<string, { done: Promise<void>; tenantId: string; abort: AbortController }>();
    let lastWatch = Date.now();
    for (;;) {
      const room = concurrency - inFlight.size;
      const claimed = room > 0 ? await claimDueCalls(room, perTenant) : [];
      claimedCount += claimed.length;
      for (const c of claimed) {
        const abort = new AbortController();
        const done = callAndRecord(c, opts, abort.signal)
          .then((o) => void outcomes.push(o))
          .catch((e: unknown) => logger.error("tool call failed unexpectedly", { step: c.id, error: String(e) }))
          .finally(() => inFlight.delete(c.id));
        inFlight.set(c.id, { done, tenantId: c.tenant_id, abort });
      }
      if (inFlight.size === 0) break;
      await Promise.race([...[...inFlight.values()].map((x) => x.done), new Promise((r) => setTimeout(r, REFILL_MS))]);
      if (Date.now() - lastWatch >= REFILL_MS) {
        lastWatch = Date.now();
        await abortSuspended(inFlight);
      }
    }
  }
  const count = (o: string) => outcomes.filter((x) => x === o).length;
  return {
    claimed: claimedCount,
    completed: count("completed"),
    failed: count("failed"),
    retried: count("retried"),
    discarded: count("discarded"),
  };
}

/** A suspension took these tenants' calls back (their fences are new): stop waiting for their answers. */
async function abortSuspended(inFlight: Map<string, { tenantId: string; abort: AbortController }>) {
  if (inFlight.size === 0) return;
  const rows = await run(pool(), INACTIVE_TENANTS, [[...new Set([...inFlight.values()].map((x) => x.tenantId))]]).catch(() => []);
  const inactive = new Set(rows.map((r) => r.id));
  for (const x of inFlight.values()) if (inactive.has(x.tenantId)) x.abort.abort(new Error("the organisation was suspended"));
}

async function claimDueCalls(limit: number, perTenant: number): Promise<Claimed[]> {
  const rows = await inTransaction(async (c) => {
    await lockForTransaction(c, "tool-calls");
    return run(c, CLAIM_DUE_CALLS, [limit, perTenant]);
  });
  return rows.map((r) => ({ ...r, kind: oneOf(CALL_KINDS, r.kind, "pipeline_steps.kind") }));
}

/** A request field as the text it stands for: strings as they are, anything else as its JSON. */
function text(v: Json | undefined): string {
  return typeof v === "string" ? v : JSON.stringify(v ?? null);
}

/** The secrets a request's headers name. */
function secretsNamed(request: ResolvedRequest): string[] {
  return [
    ...new Set(Object.values(request.headers).flatMap((parts) => parts.flatMap((p) => (p instanceof SecretReference ? [p.name] : [])))),
  ];
}

type Refusal = Extract<CallResult, { ok: false }>;
const refused = (error: string): Refusal => ({ ok: false, error, retryable: false, durationMs: 0 });

/**
 * The values of the secrets a call uses, when whom its pipeline acts for may use every one of them
 * now (a tenant admin any; a member those usable by members; nobody else, an operator included);
 * otherwise why not.
 */
async function secretsFor(c: Claimed, names: string[]): Promise<{ values: Record<string, string> } | { refusal: Refusal }> {
  if (names.length === 0) return { values: {} };
  const no = (why: string) => ({ refusal: refused(why) });
  if (!c.started_by_user_id && !c.started_by_service_account_id)
    return no(
      `request.headers: this pipeline uses ${names.map((n) => `secrets.${n}`).join(", ")}, but whoever started it may not: tenants' secrets are used by pipelines their own people start`,
    );
  const starter = await runOne(pool(), PIPELINE_STARTER_RIGHTS, [c.started_by_user_id, c.started_by_service_account_id]);
  if (!starter || starter.disabled || starter.tenant_id !== c.tenant_id)
    return no(`request.headers: the account that started this pipeline is disabled, so its calls no longer use secrets`);
  const values = await secretValues(c.tenant_id, names);
  const out: Record<string, string> = {};
  for (const n of names) {
    const s = values[n];
    if (!s) return no(`request.headers: secrets.${n} no longer exists (or cannot be read with this app's secret); set it again`);
    if (starter.role !== "tenant_admin" && s.usableBy !== "tenant_member")
      return no(`request.headers: secrets.${n} is for tenant admins' pipelines; whoever started this one may no longer use it`);
    out[n] = s.value;
  }
  return { values: out };
}

async function makeCall(
  c: Claimed,
  request: ResolvedRequest,
  opts: ToolCallOptions,
  signal: AbortSignal,
  secrets: Record<string, string>,
): Promise<CallResult> {
  const started = Date.now();
  const maxBytes = opts.maxOutputBytes ?? env().PIPELINE_OUTPUT_MAX_BYTES;
  const { fields } = request;
  try {
    if (c.kind === "http") {
      let url: URL;
      try {
        url = new URL(text(fields.url));
      } catch {
        return refused(`request.url: not a URL: ${text(fields.url).slice(0, 200)}`);
      }
      const allowed = opts.allowedHosts ?? env().TOOL_CALL_ALLOWED_HOSTS;
      if ((url.protocol !== "http:" && url.protocol !== "https:") || !hostAllowed(url, allowed))
        return refused(`request.url: ${url.host} is not on the operator's allow-list for tool calls`);
      // resolved once and pinned: the address checked is the address called
      const destination = await resolveDestination(url, opts.allowedNetworks ?? env().TOOL_CALL_ALLOWED_NETWORKS);
      const method = text(fields.method ?? "GET");
      const hasBody = fields.body !== undefined && method !== "GET";
      // the secrets' values enter the request here, as it leaves, and nowhere else
      const headers: Record<string, string> = hasBody ? { "content-type": "application/json" } : {};
      for (const [k, parts] of Object.entries(request.headers))
        headers[k] = parts.map((p) => (p instanceof SecretReference ? secrets[p.name]! : p)).join("");
      const res = await pinnedRequest(url, destination, {
        method,
        headers,
        body: hasBody ? JSON.stringify(fields.body) : undefined,
        signal,
      });
      return await readResponse(res, maxBytes, started, c.retry_on, { quoteErrors: Object.keys(secrets).length === 0 });
    }
    const res = await (opts.transport ?? gatewayTransport).send({
      tenantId: c.tenant_id,
      endpoint: text(fields.endpoint),
      path: text(fields.path ?? "/v1/chat/completions"),
      method: text(fields.method ?? "POST"),
      body: fields.body,
      signal,
    });
    return await readResponse(res, maxBytes, started, c.retry_on);
  } catch (e) {
    if (e instanceof OutboundRefused) return refused(e.message);
    if (e instanceof NoReplica) return { ok: false, error: e.message, retryable: true, durationMs: Date.now() - started };
    return failedCall(e, c.timeout_s, started);
  }
}

async function callAndRecord(c: Claimed, opts: ToolCallOptions, abort?: AbortSignal): Promise<Outcome> {
  const names = (await db().pipelineStep.findMany({ where: { pipelineId: c.pipeline_id }, select: { name: true } })).map((s) => s.name);
  const secretNames = new Set(
    (await db().tenantSecret.findMany({ where: { tenantId: c.tenant_id }, select: { name: true } })).map((s) => s.name),
  );
  let result: CallResult;
  let secrets: Record<string, string> = {};
  try {
    const outputs = await latestOutputs(db(), c.pipeline_id, names);
    const request = resolveRequest(c, {
      outputs,
      iteration: c.iteration,
      pipeline: { id: c.pipeline_id, name: c.pipeline_name },
      secretNames,
    });
    const used = c.kind === "http" ? await secretsFor(c, secretsNamed(request)) : { values: {} };
    if ("refusal" in used) result = used.refusal;
    else {
      secrets = used.values;
      const signal = abort ? AbortSignal.any([abort, AbortSignal.timeout(c.timeout_s * 1000)]) : AbortSignal.timeout(c.timeout_s * 1000);
      result = await makeCall(c, request, opts, signal, secrets);
    }
  } catch (e) {
    if (!(e instanceof ExpressionError)) throw e;
    result = refused(`could not resolve ${e.message}`);
  }
  return record(c, result, secrets);
}

async function record(c: Claimed, r: CallResult, secrets: Record<string, string>): Promise<Outcome> {
  const error = r.ok ? null : redactText(r.error, secrets);
  const details = {
    attempt: c.call_attempt,
    status: r.httpStatus ?? null,
    duration_ms: r.durationMs,
    ok: r.ok,
    ...(r.ok ? { bytes: r.bytes } : { error }),
  };
  const label = `${c.kind === "http" ? "http" : "inference"} call, attempt ${c.call_attempt}`;
  const { outcome, started } = await db().$transaction(async (tx) => {
    await run(tx, LOCK_PIPELINE_FOR_RESULT, [c.pipeline_id]);

    const cur = await run(tx, LOCK_CALL_STEP, [c.call_fence, c.id]);
    const none = { submitted: 0, calls: 0 };
    if (!cur[0]?.ok) {
      await logEvents(tx, c.pipeline_id, [
        {
          step: c.name,
          kind: "tool_call",
          iteration: c.iteration,
          message: `${label}: result discarded, the step is no longer waiting for it`,
          details: { ...details, discarded: true },
        },
      ]);
      return { outcome: "discarded" as const, started: none };
    }
    await logEvents(tx, c.pipeline_id, [
      {
        step: c.name,
        kind: "tool_call",
        iteration: c.iteration,
        message: `${label}: ${r.ok ? `HTTP ${r.httpStatus}` : error} in ${r.durationMs} ms`,
        details,
      },
    ]);
    if (r.ok) {
      const output = redactJson(r.output as Json, secrets);
      await run(tx, RECORD_CALL_OUTPUT, [c.pipeline_id, c.name, c.iteration, JSON.stringify(output), r.bytes, c.kind]);
      await logEvents(tx, c.pipeline_id, [
        {
          step: c.name,
          kind: "output",
          iteration: c.iteration,
          message: `output of ${r.bytes} B from the ${c.kind} call`,
          details: { bytes: r.bytes, source: c.kind },
        },
      ]);
      return {
        outcome: "completed" as const,
        started: await advanceInTx(tx, c.pipeline_id, { outcomes: { [c.name]: { outcome: "completed" } } }),
      };
    }
    if (r.retryable && c.call_attempt <= c.max_retries) {
      const wait = backoffSeconds(c.call_attempt, {
        backoff_s: c.retry_backoff_s,
        backoff_factor: c.retry_backoff_factor,
        max_backoff_s: c.retry_backoff_max_s,
      });
      await tx.pipelineStep.update({
        where: { id: c.id },
        data: {
          callAttempt: c.call_attempt + 1,
          callFence: randomUUID(),
          callDueAt: new Date(Date.now() + wait * 1000),
          callLeaseUntil: null,
          error,
        },
      });
      await logEvents(tx, c.pipeline_id, [
        {
          step: c.name,
          kind: "retry",
          iteration: c.iteration,
          message: `retry ${c.call_attempt} of ${c.max_retries} in ${wait} s`,
          details: { attempt: c.call_attempt + 1, backoff_s: wait },
        },
      ]);
      return { outcome: "retried" as const, started: none };
    }
    const why = r.retryable ? `${error} (retries spent)` : error!;
    return {
      outcome: "failed" as const,
      started: await advanceInTx(tx, c.pipeline_id, { outcomes: { [c.name]: { outcome: "failed", error: why } } }),
    };
  });
  await wake(started);
  return outcome;
}
