import "server-only";
import { randomUUID } from "node:crypto";
import type { DurableStep } from "@/lib/background/types";
import { db, pool } from "@/lib/db/client";
import { run, type RowOf } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { backoffSeconds } from "@/lib/jobs/job-lifecycle";
import { secretValues } from "@/lib/secrets/secrets";
import { oneOf } from "@/lib/vocabulary";
import { advanceInTx, latestOutputs, logEvents, resolveRequest, wake } from "../advance-pipeline";
import { hostAllowed } from "../allow-list";
import { CLAIM_DUE_CALLS, LOCK_CALL_STEP, LOCK_PIPELINE_FOR_RESULT, RECORD_CALL_OUTPUT } from "../statements";
import { ExpressionError, type Json } from "../expressions";
import { failedCall, readResponse, type CallResult } from "./call-result";
import { gatewayTransport, NoReplica, type InferenceTransport } from "./inference-transport";
import { redactJson, redactText } from "./redact";

// The background workers' side of tool-call steps (http, inference): claim the calls that are due
// under a lease (FOR UPDATE SKIP LOCKED, so any number of app instances share the queue), make
// each call with its timeout, and record what came of it in one transaction that names the call's
// fence: a result for a step that was cancelled, retried or re-leased meanwhile changes nothing.
// Failures that may pass (timeouts, network errors, 5xx/429 by default) are retried with the
// step's backoff; the response, redacted of the tenant's secrets, becomes the step's output.

export interface ToolCallOptions {
  allowedHosts?: string[];
  maxOutputBytes?: number;
  transport?: InferenceTransport;
  limit?: number;
  /** Inngest's step tools when it runs the worker: each call is then a durable step */
  step?: DurableStep;
}

/** The tool-call steps' kinds (a job step is never claimed here). */
const CALL_KINDS = ["http", "inference"] as const;

type Claimed = Omit<RowOf<typeof CLAIM_DUE_CALLS>, "kind"> & { kind: (typeof CALL_KINDS)[number] };

const direct: DurableStep = { run: (_id, fn) => fn() };

export async function runDueToolCalls(opts: ToolCallOptions = {}) {
  const step = opts.step ?? direct;
  const claimed = await step.run("claim-due-calls", () => claimDueCalls(opts.limit ?? 20));
  const outcomes = await Promise.all(
    claimed.map((c) => step.run(`call-${c.id}-${c.call_attempt}-${c.call_fence.slice(0, 8)}`, () => callAndRecord(c, opts))),
  );
  const count = (o: string) => outcomes.filter((x) => x === o).length;
  return {
    claimed: claimed.length,
    completed: count("completed"),
    failed: count("failed"),
    retried: count("retried"),
    discarded: count("discarded"),
  };
}

async function claimDueCalls(limit: number): Promise<Claimed[]> {
  const rows = await run(pool(), CLAIM_DUE_CALLS, [limit]);
  return rows.map((r) => ({ ...r, kind: oneOf(CALL_KINDS, r.kind, "pipeline_steps.kind") }));
}

/** A request field as the text it stands for: strings as they are, anything else as its JSON. */
function text(v: Json | undefined): string {
  return typeof v === "string" ? v : JSON.stringify(v ?? null);
}

async function makeCall(c: Claimed, request: Record<string, Json>, opts: ToolCallOptions): Promise<CallResult> {
  const started = Date.now();
  const maxBytes = opts.maxOutputBytes ?? env().PIPELINE_OUTPUT_MAX_BYTES;
  const signal = AbortSignal.timeout(c.timeout_s * 1000);
  try {
    if (c.kind === "http") {
      let url: URL;
      try {
        url = new URL(text(request.url));
      } catch {
        return { ok: false, error: `request.url: not a URL: ${text(request.url).slice(0, 200)}`, retryable: false, durationMs: 0 };
      }
      const allowed = opts.allowedHosts ?? env().TOOL_CALL_ALLOWED_HOSTS;
      if ((url.protocol !== "http:" && url.protocol !== "https:") || !hostAllowed(url, allowed)) {
        return {
          ok: false,
          error: `request.url: ${url.host} is not on the operator's allow-list for tool calls`,
          retryable: false,
          durationMs: 0,
        };
      }
      const method = text(request.method ?? "GET");
      const hasBody = request.body !== undefined && method !== "GET";
      const headers = {
        ...(hasBody ? { "content-type": "application/json" } : {}),
        ...(request.headers as Record<string, string> | undefined),
      };
      // redirects are answers, not instructions: following one could leave the allow-list
      const res = await fetch(url, {
        method,
        headers,
        body: hasBody ? JSON.stringify(request.body) : undefined,
        redirect: "manual",
        signal,
      });
      return await readResponse(res, maxBytes, started, c.retry_on);
    }
    const res = await (opts.transport ?? gatewayTransport).send({
      tenantId: c.tenant_id,
      endpoint: text(request.endpoint),
      path: text(request.path ?? "/v1/chat/completions"),
      method: text(request.method ?? "POST"),
      body: request.body,
      signal,
    });
    return await readResponse(res, maxBytes, started, c.retry_on);
  } catch (e) {
    if (e instanceof NoReplica) return { ok: false, error: e.message, retryable: true, durationMs: Date.now() - started };
    return failedCall(e, c.timeout_s, started);
  }
}

async function callAndRecord(c: Claimed, opts: ToolCallOptions): Promise<"completed" | "failed" | "retried" | "discarded"> {
  const names = (await db().pipelineStep.findMany({ where: { pipelineId: c.pipeline_id }, select: { name: true } })).map((s) => s.name);
  const secrets = c.kind === "http" ? await secretValues(c.tenant_id) : {};
  let result: CallResult;
  try {
    const outputs = await latestOutputs(db(), c.pipeline_id, names);
    const request = resolveRequest(c, { outputs, iteration: c.iteration, pipeline: { id: c.pipeline_id, name: c.pipeline_name }, secrets });
    result = await makeCall(c, request, opts);
  } catch (e) {
    if (!(e instanceof ExpressionError)) throw e;
    result = { ok: false, error: `could not resolve ${e.message}`, retryable: false, durationMs: 0 };
  }
  return record(c, result, secrets);
}

async function record(
  c: Claimed,
  r: CallResult,
  secrets: Record<string, string>,
): Promise<"completed" | "failed" | "retried" | "discarded"> {
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
