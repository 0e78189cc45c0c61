import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { ingestEndpointMetrics } from "@/lib/endpoints/endpoint-metrics";
import { finishJob } from "@/lib/jobs/finish-job";
import { authenticateJobToken, jobReportToken } from "@/lib/jobs/job-token";
import { postJobOutputs } from "@/lib/jobs/post-job-outputs";
import { cancelPipeline } from "@/lib/pipelines/cancel-pipeline";
import { createPipeline } from "@/lib/pipelines/create-pipeline";
import { enforcePipelineDeadlines } from "@/lib/pipelines/enforce-deadlines";
import { getPipelineOrThrow, pipelineLog } from "@/lib/pipelines/queries";
import { retryPipelineStep } from "@/lib/pipelines/retry-step";
import { startModelServer } from "@/agent/src/model-server";
import { reportReplicaAddress } from "@/lib/endpoints/report-replica-address";
import { gateway, stopGateway } from "@/lib/gateway/gateway";
import { runDueToolCalls } from "@/lib/pipelines/tool-calls/run-tool-calls";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { pinnedRequest, resolveDestination } from "@/lib/pipelines/tool-calls/outbound";
import { putSecret } from "@/lib/secrets/secrets";
import { systemActor } from "@/lib/auth/principal";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { updateUser } from "@/lib/users/update-user";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  makeTenant,
  makeUser,
  operatorPrincipal,
  placementOf,
  tenantAdminPrincipal,
  tenantMemberPrincipal,
  unique,
} from "../support/fixtures";
import { codeOf } from "../support/outcomes";

// Read by lib/env on first use: the operator allows tool calls to this machine (any port), and to
// its loopback network (tool calls reach public addresses only unless a network is allowed).
process.env.TOOL_CALL_ALLOWED_HOSTS = "127.0.0.1";
process.env.TOOL_CALL_ALLOWED_NETWORKS = "127.0.0.0/8";
const IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3";

// A local tool server: counts calls per path, fails /flaky with 503 until told otherwise, answers
// /slow after 2 s, /echo with the request's headers and body, /v1/chat/completions like a model.
const calls = new Map<string, number>();
let flakyFailures = 2;
// /hold?t=TAG: answers once TAG is released; how many of each tag it holds now, and at most
const holding = new Map<string, number>();
const peak = new Map<string, number>();
const released = new Set<string>();
const waitingOn = new Map<string, Array<() => void>>();
const release = (tag: string) => {
  released.add(tag);
  for (const done of waitingOn.get(tag) ?? []) done();
  waitingOn.delete(tag);
};
let brokenOk = false;
const server = http.createServer((req, res) => {
  const path = req.url!.split("?")[0]!;
  calls.set(path, (calls.get(path) ?? 0) + 1);
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(payload));
    };
    if (path === "/flaky")
      return calls.get(path)! <= flakyFailures ? send(503, { error: "busy" }) : send(200, { ok: true, calls: calls.get(path) });
    if (path === "/slow") return void setTimeout(() => send(200, { late: true }), 2000);
    if (path === "/broken") return brokenOk ? send(200, { fixed: true }) : send(404, { error: "no such tool" });
    if (path === "/echo") return send(200, { headers: req.headers, body: body ? JSON.parse(body) : null });
    // a server that quotes part of the key it was given, as some APIs do in their errors and answers
    if (path === "/quote") {
      const key = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
      return req.url!.includes("ok")
        ? send(200, { note: `key ${key.slice(0, 12)}… accepted`, tail: key.slice(-8) })
        : send(401, { error: `Incorrect API key provided: ${key.slice(0, 10)}****${key.slice(-4)}` });
    }
    if (path === "/hold") {
      const tag = new URL(req.url!, "http://x").searchParams.get("t") ?? "";
      const now = (holding.get(tag) ?? 0) + 1;
      holding.set(tag, now);
      peak.set(tag, Math.max(peak.get(tag) ?? 0, now));
      const done = () => {
        holding.set(tag, holding.get(tag)! - 1);
        send(200, { held: tag });
      };
      if (released.has(tag)) return done();
      waitingOn.set(tag, [...(waitingOn.get(tag) ?? []), done]);
      res.on("close", () => void (res.writableFinished || holding.set(tag, holding.get(tag)! - 1)));
      return;
    }
    if (path === "/v1/chat/completions")
      return send(200, { choices: [{ message: { role: "assistant", content: `plan for: ${JSON.parse(body).messages[0].content}` } }] });
    send(200, { path });
  });
});
let base = "";
let allowed: string[] = [];

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  allowed = [`127.0.0.1:${port}`];
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function setup() {
  const fleet = await availableFleet(2, 4, "AG");
  const tenant = await makeTenant(8);
  // a person of the tenant: pipelines act for whoever started them (the secrets their calls may use)
  const admin = await makeUser("tenant_admin", tenant.id);
  const asT = actorFor(tenantAdminPrincipal(tenant.id, admin.id));
  const agent = agentPrincipal(fleet.cluster.id);
  return { ...fleet, tenant, asT, agent, admin };
}

const job = (gpuType: string, name: string, more: Record<string, unknown> = {}) => ({
  name,
  gpu_count: 1,
  gpu_type: gpuType,
  image: IMAGE,
  command: "python step.py",
  ...more,
});
const steps = async (tenantId: string, id: string) =>
  Object.fromEntries((await getPipelineOrThrow(tenantAdminPrincipal(tenantId), id)).steps.map((s) => [s.name, s]));
const runningJob = async (pipelineId: string, step: string) => {
  await runSchedulerCycle("test");
  const s = await db().pipelineStep.findUniqueOrThrow({ where: { pipelineId_name: { pipelineId, name: step } } });
  const j = await db().job.findUniqueOrThrow({ where: { id: s.jobId! } });
  expect(j.status).toBe("running");
  return j;
};
/** Plays the agent for a running job step: posts its outputs, then reports it completed. */
async function complete(agent: ReturnType<typeof agentPrincipal>, jobId: string, outputs?: Record<string, unknown>) {
  const pl = await placementOf(jobId);
  if (outputs) await postJobOutputs(agent, jobId, { ...pl, outputs: outputs as never });
  await finishJob({ principal: agent }, jobId, { status: "completed", exit_code: 0, ...pl });
}
const dueNow = (pipelineId: string) =>
  db().$executeRaw`UPDATE pipeline_steps SET call_due_at = now() WHERE pipeline_id = ${pipelineId}::uuid AND status = 'running'`;

describe("step outputs", () => {
  it("a step's posted outputs resolve in later steps' command and environment when they are submitted; posts are fenced, size-limited and accepted from the workload's own token", async () => {
    const { gpuType, asT, agent, tenant } = await setup();
    const p = await createPipeline(asT, {
      name: unique("outputs"),
      steps: [
        job(gpuType, "plan", { outputs: ["files", "lr"] }),
        job(gpuType, "act", {
          depends_on: ["plan"],
          command: "python act.py --file ${steps.plan.outputs.files[0]}",
          env: { LR: "${steps.plan.outputs.lr}", ALL: "${steps.plan.outputs.files}" },
        }),
      ],
    });
    const plan = await runningJob(p.id, "plan");
    const pl = await placementOf(plan.id);
    // the agent of another placement, or none at all, changes nothing
    expect(
      await codeOf(
        postJobOutputs(agent, plan.id, { attempt: pl.attempt, fence: "00000000-0000-4000-8000-000000000000", outputs: { files: ["x"] } }),
      ),
    ).toBe("stale_report");
    expect(
      await codeOf(
        postJobOutputs(agentPrincipal((await availableFleet(1, 1, "AX")).cluster.id), plan.id, { ...pl, outputs: { files: ["x"] } }),
      ),
    ).toBe("not_found");
    expect(await codeOf(postJobOutputs(agent, plan.id, { ...pl, outputs: { blob: "x".repeat(70_000) } }))).toBe("payload_too_large");
    // the workload posts with its own token (what the agent hands its container)
    const workload = await authenticateJobToken(jobReportToken(plan.id, pl.attempt, pl.fence));
    expect(await postJobOutputs(workload, plan.id, { outputs: { files: ["data/a.jsonl", "data/b.jsonl"], lr: 0.0003 } })).toMatchObject({
      attempt: pl.attempt,
    });
    // its token speaks for its own placement only
    expect(await codeOf(postJobOutputs(workload, "00000000-0000-4000-8000-000000000000", { outputs: {} }))).toBe("not_found");
    await finishJob({ principal: agent }, plan.id, { status: "completed", exit_code: 0, ...pl });
    // once the placement ended, its outputs are final and its token is dead
    expect(await codeOf(postJobOutputs(agent, plan.id, { ...pl, outputs: { files: [] } }))).toBe("stale_report");
    expect(await codeOf(authenticateJobToken(jobReportToken(plan.id, pl.attempt, pl.fence)))).toBe("unauthorized");
    const act = await runningJob(p.id, "act");
    expect(act.command).toBe("python act.py --file data/a.jsonl");
    expect(act.env).toEqual({ LR: "0.0003", ALL: '["data/a.jsonl","data/b.jsonl"]' });
    const s = await steps(tenant.id, p.id);
    expect(s.plan!.status).toBe("completed");
    const log = await pipelineLog(tenantAdminPrincipal(tenant.id), p.id);
    expect(log.find((e) => e.kind === "output")).toMatchObject({ step: "plan", details: { bytes: expect.any(Number), source: "job" } });
  });

  it("refuses at creation a reference to an unknown step or declared field (400 naming the field); fails the step clearly when a field is missing at run time", async () => {
    const { gpuType, asT, agent, tenant } = await setup();
    const refused = await createPipeline(asT, {
      name: "bad-ref",
      steps: [
        job(gpuType, "plan", { outputs: ["files"] }),
        job(gpuType, "act", { depends_on: ["plan"], command: "run ${steps.plan.outputs.file}" }),
      ],
    }).catch((e) => e);
    expect(refused).toMatchObject({
      code: "validation_failed",
      details: [{ path: "steps[1].command", message: expect.stringMatching(/declares the outputs files; not “file”/) }],
    });
    // what the editor's YAML said, unparsed: a 400 naming the field, never an internal error
    expect(await createPipeline(asT, { name: "yaml", steps: [{ name: "x", gpu_count: "two" }] } as never).catch((e) => e)).toMatchObject({
      code: "validation_failed",
      details: [{ path: "steps[0].gpu_count" }],
    });
    expect(await db().pipeline.count({ where: { tenantId: tenant.id } })).toBe(0);

    const p = await createPipeline(asT, {
      name: unique("late-ref"),
      steps: [job(gpuType, "plan"), job(gpuType, "act", { depends_on: ["plan"], command: "run ${steps.plan.outputs.other}" })],
    });
    await complete(agent, (await runningJob(p.id, "plan")).id, { files: ["a"] });
    const after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect(after.status).toBe("failed");
    expect(after.steps.find((s) => s.name === "act")).toMatchObject({
      status: "failed",
      jobId: null,
      error: expect.stringMatching(/could not resolve command: steps\.plan\.outputs\.other: .*has no field “other” \(it has: files\)/),
    });
  });
});

describe("conditional loops", () => {
  it("runs plan → act → check again until the condition over the latest outputs holds, recording each iteration and keeping each iteration's outputs", async () => {
    const { gpuType, asT, agent, tenant } = await setup();
    const p = await createPipeline(asT, {
      name: unique("loop"),
      steps: [
        job(gpuType, "plan", { env: { FEEDBACK: '${steps.check.outputs.feedback ?? "none"}', ITER: "${loop.iteration}" } }),
        job(gpuType, "act", { depends_on: ["plan"] }),
        job(gpuType, "check", {
          depends_on: ["act"],
          outputs: ["passed", "feedback"],
          repeat: { from: "plan", until: "steps.check.outputs.passed == true", max: 4 },
        }),
        job(gpuType, "report", { depends_on: ["check"] }),
      ],
    });
    const envs: unknown[] = [];
    for (const verdict of [false, false, true]) {
      const plan = await runningJob(p.id, "plan");
      envs.push(plan.env);
      await complete(agent, plan.id);
      await complete(agent, (await runningJob(p.id, "act")).id);
      await complete(agent, (await runningJob(p.id, "check")).id, { passed: verdict, feedback: verdict ? "good" : "lower the lr" });
    }
    expect(envs).toEqual([
      { FEEDBACK: "none", ITER: "0" },
      { FEEDBACK: "lower the lr", ITER: "1" },
      { FEEDBACK: "lower the lr", ITER: "2" },
    ]);
    await complete(agent, (await runningJob(p.id, "report")).id);
    const done = await steps(tenant.id, p.id);
    expect((await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).status).toBe("completed");
    expect(done.check).toMatchObject({ status: "completed", iteration: 3 });
    expect(await db().pipelineStepOutput.count({ where: { pipelineId: p.id, step: "check" } })).toBe(3);
    const iterations = (await pipelineLog(tenantAdminPrincipal(tenant.id), p.id))
      .filter((e) => e.kind === "iteration")
      .map((e) => e.message);
    expect(iterations).toEqual([
      "iteration 1 of at most 4: “steps.check.outputs.passed == true” is false; starting iteration 2",
      "iteration 2 of at most 4: “steps.check.outputs.passed == true” is false; starting iteration 3",
      "loop done: condition met after 3 iterations",
    ]);
  });

  it("gives up at max (failing the step unless on_exhausted says continue), never running more iterations", async () => {
    const { gpuType, asT, agent, tenant } = await setup();
    const p = await createPipeline(asT, {
      name: unique("stubborn"),
      steps: [
        job(gpuType, "try", { outputs: ["ok"], repeat: { until: "steps.try.outputs.ok", max: 2 } }),
        job(gpuType, "after", { depends_on: ["try"] }),
      ],
    });
    await complete(agent, (await runningJob(p.id, "try")).id, { ok: false });
    await complete(agent, (await runningJob(p.id, "try")).id, { ok: false });
    const after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect(after.status).toBe("failed");
    expect(after.steps.map((s) => [s.name, s.status])).toEqual([
      ["try", "failed"],
      ["after", "skipped"],
    ]);
    expect(after.steps[0]!.error).toMatch(/loop gave up: condition still false after 2 iterations/);
    expect(await db().job.count({ where: { pipelineId: p.id } })).toBe(2);
  });
});

describe("tool-call steps", () => {
  it("http steps call allow-listed URLs with secrets in headers (never stored), retry 5xx with backoff, and hand the response to the next step", async () => {
    const { gpuType, asT, tenant, agent } = await setup();
    await putSecret(asT, "TOOL_TOKEN", "s3cr3t-value-123");
    flakyFailures = 2;
    calls.delete("/flaky");
    const p = await createPipeline(asT, {
      name: unique("tools"),
      steps: [
        {
          name: "fetch",
          kind: "http",
          request: {
            method: "POST",
            url: `${base}/echo`,
            headers: { Authorization: "Bearer ${secrets.TOOL_TOKEN}" },
            body: { q: "${pipeline.name}" },
          },
        },
        { name: "flaky", kind: "http", depends_on: ["fetch"], request: { url: `${base}/flaky` }, retry: { max: 3, backoff_s: 1 } },
        job(gpuType, "use", { depends_on: ["flaky"], command: "echo ${steps.flaky.outputs.body.calls} ${steps.fetch.outputs.status}" }),
      ],
    });
    // the worker claims whatever is due in the whole database (other files' pipelines too): run it
    // until this pipeline's call was made, one call per round
    const fetchedOutput = () =>
      db().pipelineStepOutput.findUnique({ where: { pipelineId_step_iteration: { pipelineId: p.id, step: "fetch", iteration: 0 } } });
    await expect
      .poll(async () => (await fetchedOutput()) ?? (await runDueToolCalls({ allowedHosts: allowed }), await fetchedOutput()), {
        timeout: 20_000,
      })
      .not.toBeNull();
    const fetched = (await fetchedOutput())!;
    const text = JSON.stringify(fetched.output);
    expect(text).not.toContain("s3cr3t-value-123");
    expect((fetched.output as { body: { headers: { authorization: string } } }).body.headers.authorization).toBe(
      "Bearer [secret TOOL_TOKEN]",
    );
    // a worker run takes up a call that falls due while it runs (the next step's, say) at once, so
    // the flaky step's attempts are counted, not the runs: two 503s, then the answer
    await expect
      .poll(
        async () => {
          await dueNow(p.id);
          await runDueToolCalls({ allowedHosts: allowed });
          return calls.get("/flaky");
        },
        { timeout: 20_000 },
      )
      .toBe(3);
    const use = await runningJob(p.id, "use");
    expect(use.command).toBe("echo 3 200");
    const log = await pipelineLog(tenantAdminPrincipal(tenant.id), p.id);
    expect(log.filter((e) => e.kind === "tool_call" && e.step === "flaky").map((e) => (e.details as { status: number }).status)).toEqual([
      503, 503, 200,
    ]);
    expect(log.filter((e) => e.kind === "retry").map((e) => e.message)).toEqual(["retry 1 of 3 in 1 s", "retry 2 of 3 in 2 s"]);
    expect(JSON.stringify(log.map((e) => [e.message, e.details]))).not.toContain("s3cr3t-value-123");
    await complete(agent, use.id);
  });

  it("times out a slow call and fails the step once retries are spent; the allow-list refuses other hosts without calling them", async () => {
    const { asT, tenant } = await setup();
    const slow = await createPipeline(asT, {
      name: unique("slow"),
      steps: [{ name: "slow", kind: "http", request: { url: `${base}/slow` }, timeout_s: 1 }],
    });
    await runDueToolCalls({ allowedHosts: allowed });
    const s = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), slow.id);
    expect(s.status).toBe("failed");
    expect(s.steps[0]!.error).toMatch(/no response within 1 s \(retries spent\)/);

    const refusedAtCreation = await createPipeline(asT, {
      name: "elsewhere",
      steps: [{ name: "x", kind: "http", request: { url: "http://localhost:9/x" } }],
    }).catch((e) => e);
    expect(refusedAtCreation).toMatchObject({
      code: "validation_failed",
      details: [{ path: "steps[0].request.url", message: expect.stringMatching(/localhost:9 is not on the operator's allow-list/) }],
    });
    // the operator narrowed the list since: the worker refuses too, and nothing is called
    const before = calls.get("/echo") ?? 0;
    const narrowed = await createPipeline(asT, {
      name: unique("narrowed"),
      steps: [{ name: "x", kind: "http", request: { url: `${base}/echo` }, retry: { max: 3 } }],
    });
    await runDueToolCalls({ allowedHosts: ["api.example.com"] });
    expect(calls.get("/echo") ?? 0).toBe(before);
    expect((await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), narrowed.id)).steps[0]!.error).toMatch(
      /is not on the operator's allow-list/,
    );
  });

  it("inference steps call the tenant's endpoint through the gateway's balancer, at the port the replica's agent published", async () => {
    const { gpuType, asT, tenant, cluster, nodes } = await setup();
    const ep = await createEndpoint(asT, {
      name: unique("chat"),
      model: "test/model",
      gpu_type: gpuType,
      gpus_per_replica: 1,
      replicas: 1,
      cluster_id: cluster.id,
      autoscale_metric: "none",
      cooldown_s: 300,
    });
    const replica = await db().endpointReplica.findFirstOrThrow({ where: { endpointId: ep.id, status: { not: "stopped" } } });
    // a tenant cannot aim the control plane's calls anywhere: only the node's agent says where a replica serves
    const sample = { replica_id: replica.id, requests: 1, errors: 0, p50_ms: 5, p95_ms: 9, p99_ms: 10, healthy: true, serving_url: base };
    expect((await ingestEndpointMetrics(asT, ep.id, [sample])).rejected).toEqual([
      { index: 0, error: "only the node's agent reports a replica's serving_url" },
    ]);
    // the replica's node, at a loopback address of its own, serves the model on the port its agent reports
    const address = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
    await db().node.update({ where: { id: replica.nodeId! }, data: { address } });
    expect(nodes.some((n) => n.node.id === replica.nodeId)).toBe(true);
    const model = await startModelServer({ model: "test/model", host: address, complete: (p) => `plan for: ${p}` });
    await reportReplicaAddress(agentPrincipal(cluster.id), ep.id, replica.id, { attempt: 1, fence: replica.fence, host_port: model.port });
    const g = await gateway();
    await g.table.refresh();
    await g.probeNow();
    const p = await createPipeline(asT, {
      name: unique("infer"),
      steps: [
        {
          name: "plan",
          kind: "inference",
          request: { endpoint: ep.name, body: { messages: [{ role: "user", content: "tune ${pipeline.name}" }] } },
        },
      ],
    });
    expect(await runDueToolCalls({ allowedHosts: [] })).toMatchObject({ completed: 1 });
    const out = await db().pipelineStepOutput.findFirstOrThrow({ where: { pipelineId: p.id, step: "plan" } });
    expect(out).toMatchObject({
      source: "inference",
      output: { status: 200, body: { choices: [{ message: { content: `plan for: tune ${p.name}` } }] } },
    });
    expect((await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).status).toBe("completed");
    expect(model.served).toBe(1);
    await model.close();
    await stopGateway();
  });
});

describe("control", () => {
  it("cancel racing a step's completion: whichever commits first, nothing keeps running, and the step says what happened", async () => {
    const { gpuType, asT, agent, tenant } = await setup();
    for (let i = 0; i < 6; i++) {
      const p = await createPipeline(asT, { name: unique("race"), steps: [job(gpuType, "a"), job(gpuType, "b", { depends_on: ["a"] })] });
      const a = await runningJob(p.id, "a");
      const pl = await placementOf(a.id);
      const [finished, cancelled] = await Promise.all([
        codeOf(finishJob({ principal: agent }, a.id, { status: "completed", exit_code: 0, ...pl })),
        codeOf(cancelPipeline(asT, p.id)),
      ]);
      expect(cancelled).toBe("ok");
      expect(["ok", "stale_report", "invalid_transition"]).toContain(finished);
      const after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
      expect(after.status).toBe("cancelled");
      const jobs = await db().job.findMany({ where: { pipelineId: p.id }, select: { id: true, status: true } });
      expect(jobs.every((j) => j.status === "completed" || j.status === "cancelled")).toBe(true);
      expect(after.steps.every((s) => ["completed", "cancelled", "skipped"].includes(s.status))).toBe(true);
      const aJob = jobs.find((j) => j.id === a.id)!;
      expect(after.steps.find((s) => s.name === "a")!.status).toBe(aJob.status === "completed" ? "completed" : "cancelled");
      expect(await db().gpu.count({ where: { allocatedJobId: { in: jobs.map((j) => j.id) } } })).toBe(0);
      expect(await db().auditLog.count({ where: { action: "pipeline.cancelled", targetId: p.id } })).toBe(1);
    }
  });

  it("a tool call's result that arrives after a cancel is discarded; cancelling twice is refused", async () => {
    const { asT, tenant } = await setup();
    const p = await createPipeline(asT, {
      name: unique("late"),
      steps: [{ name: "slow", kind: "http", request: { url: `${base}/slow` }, timeout_s: 5 }],
    });
    const worker = runDueToolCalls({ allowedHosts: allowed });
    // the worker holds the call (leased, in flight) when the cancel comes
    for (let i = 0; i < 100 && !(await db().pipelineStep.findFirstOrThrow({ where: { pipelineId: p.id } })).callLeaseUntil; i++)
      await new Promise((r) => setTimeout(r, 20));
    await cancelPipeline(asT, p.id);
    expect(await worker).toMatchObject({ discarded: 1 });
    expect(await codeOf(cancelPipeline(asT, p.id))).toBe("invalid_transition");
    const after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect(after.steps[0]!.status).toBe("cancelled");
    expect(await db().pipelineStepOutput.count({ where: { pipelineId: p.id } })).toBe(0);
    expect((await pipelineLog(tenantAdminPrincipal(tenant.id), p.id)).some((e) => /result discarded/.test(e.message))).toBe(true);
  });

  it("retries a failed step, reviving what it skipped; refuses retrying another tenant's or a completed step", async () => {
    const { asT, tenant } = await setup();
    brokenOk = false;
    const p = await createPipeline(asT, {
      name: unique("retry"),
      steps: [
        { name: "tool", kind: "http", request: { url: `${base}/broken` } },
        { name: "next", kind: "http", depends_on: ["tool"], request: { url: `${base}/echo` } },
      ],
    });
    await runDueToolCalls({ allowedHosts: allowed });
    let after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect(after.steps.map((s) => [s.name, s.status])).toEqual([
      ["tool", "failed"],
      ["next", "skipped"],
    ]);
    expect(after.steps[0]!.error).toMatch(/HTTP 404/);
    expect(await codeOf(retryPipelineStep(actorFor(tenantAdminPrincipal((await makeTenant(1)).id)), p.id, "tool"))).toBe("not_found");
    expect(await codeOf(retryPipelineStep(asT, p.id, "next"))).toBe("invalid_transition");
    brokenOk = true;
    await retryPipelineStep(asT, p.id, "tool");
    await runDueToolCalls({ allowedHosts: allowed });
    await runDueToolCalls({ allowedHosts: allowed });
    after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect(after.status).toBe("completed");
    expect((await pipelineLog(tenantAdminPrincipal(tenant.id), p.id)).some((e) => e.kind === "retry" && /retried by/.test(e.message))).toBe(
      true,
    );
  });

  it("a job step's retry policy: only the exit codes it names retry, after its own backoff", async () => {
    const { gpuType, asT, agent, tenant } = await setup();
    const p = await createPipeline(asT, {
      name: unique("policy"),
      steps: [job(gpuType, "train", { retry: { max: 3, backoff_s: 7, backoff_factor: 3, max_backoff_s: 100, on_exit_codes: [137] } })],
    });
    const train = await runningJob(p.id, "train");
    const before = Date.now();
    await finishJob({ principal: agent }, train.id, { status: "failed", exit_code: 137, ...(await placementOf(train.id)) });
    const requeued = await db().job.findUniqueOrThrow({ where: { id: train.id } });
    expect(requeued.status).toBe("queued");
    expect(requeued.notBefore!.getTime() - before).toBeGreaterThanOrEqual(6_500);
    expect(requeued.notBefore!.getTime() - before).toBeLessThan(9_000);
    expect(requeued.pendingReason).toMatch(/Retry 1 of 3 after a 7 s backoff/);
    await db().job.update({ where: { id: train.id }, data: { notBefore: null } }); // the backoff, passed
    await runningJob(p.id, "train");
    await finishJob({ principal: agent }, train.id, { status: "failed", exit_code: 1, ...(await placementOf(train.id)) });
    const after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect((await db().job.findUniqueOrThrow({ where: { id: train.id } })).status).toBe("failed");
    expect(after.status).toBe("failed");
    expect(after.steps[0]!.error).toMatch(/exit code 1/);
  });

  it("a pipeline past its deadline fails and its running work is cancelled", async () => {
    const { gpuType, asT, tenant } = await setup();
    const p = await createPipeline(asT, { name: unique("deadline"), deadline_s: 60, steps: [job(gpuType, "long")] });
    const long = await runningJob(p.id, "long");
    await db().$executeRaw`UPDATE pipelines SET deadline_at = created_at + interval '1 millisecond' WHERE id = ${p.id}::uuid`;
    expect((await enforcePipelineDeadlines()).expired).toBeGreaterThanOrEqual(1);
    const after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect(after).toMatchObject({ status: "failed", reason: expect.stringMatching(/deadline/) });
    expect((await db().job.findUniqueOrThrow({ where: { id: long.id } })).status).toBe("cancelled");
  });
});

describe("secrets reach the header they are put in, and nothing else (issue 27)", () => {
  const KEY = "sk-proj-Q7mZ2xLwR9tYb4NcV8kJ1pDs";
  const secretIn = async (pipelineId: string) => {
    const [steps, events, outputs] = await Promise.all([
      db().pipelineStep.findMany({ where: { pipelineId }, select: { error: true, request: true } }),
      db().pipelineEvent.findMany({ where: { pipelineId }, select: { message: true, details: true } }),
      db().pipelineStepOutput.findMany({ where: { pipelineId }, select: { output: true } }),
    ]);
    const stored = JSON.stringify([steps, events, outputs]);
    // the whole key, or any eight characters of it in a row
    for (let i = 0; i + 8 <= KEY.length; i++) if (stored.includes(KEY.slice(i, i + 8))) return KEY.slice(i, i + 8);
    return null;
  };

  it("a server quoting part of the key gives none of it away: errors are not quoted, answers are masked", async () => {
    const { asT, tenant } = await setup();
    await putSecret(asT, "API_KEY", KEY);
    const p = await createPipeline(asT, {
      name: unique("quote"),
      steps: [
        { name: "ok", kind: "http", request: { url: `${base}/quote?ok`, headers: { Authorization: "Bearer ${secrets.API_KEY}" } } },
        { name: "bad", kind: "http", request: { url: `${base}/quote`, headers: { Authorization: "Bearer ${secrets.API_KEY}" } } },
      ],
    });
    await expect
      .poll(
        async () => (
          await runDueToolCalls({ allowedHosts: allowed }),
          (await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).status
        ),
      )
      .toBe("failed");
    const after = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect(after.steps.find((x) => x.name === "bad")!.error).toBe("HTTP 401 (the answer is not quoted: the request carried a secret)");
    const out = await db().pipelineStepOutput.findFirstOrThrow({ where: { pipelineId: p.id, step: "ok" } });
    expect(out.output).toMatchObject({ body: { note: "key [secret API_KEY]… accepted", tail: "[secret API_KEY]" } });
    expect(await secretIn(p.id)).toBeNull();
  });

  it("an expression cannot test, compare or quote a secret: refused at creation, and at the call for a spec written before", async () => {
    const { asT, tenant } = await setup();
    await putSecret(asT, "API_KEY", KEY);
    for (const header of ['${secrets.API_KEY < "sk-m"}', "${!secrets.API_KEY}", '${secrets.API_KEY ?? ""}']) {
      const refused = await createPipeline(asT, {
        name: unique("probe"),
        steps: [{ name: "x", kind: "http", request: { url: `${base}/echo`, headers: { X: header } } }],
      }).catch((e: unknown) => e);
      expect(refused, header).toMatchObject({ code: "validation_failed", details: [{ path: "steps[0].request.headers.X" }] });
    }
    // a pipeline whose header was written before the rule (or by hand): the call fails naming the secret, never quoting it
    const p = await createPipeline(asT, {
      name: unique("old"),
      steps: [{ name: "x", kind: "http", request: { url: `${base}/echo`, headers: { X: "${secrets.API_KEY}" } } }],
    });
    await db()
      .$executeRaw`UPDATE pipeline_steps SET request = jsonb_set(request, '{headers,X}', to_jsonb('\${!secrets.API_KEY}'::text)) WHERE pipeline_id = ${p.id}::uuid`;
    const before = calls.get("/echo") ?? 0;
    await expect
      .poll(
        async () => (
          await runDueToolCalls({ allowedHosts: allowed }),
          (await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).status
        ),
      )
      .toBe("failed");
    expect((await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).steps[0]!.error).toMatch(
      /^could not resolve request: secrets\.API_KEY can only be inserted whole/,
    );
    expect(calls.get("/echo") ?? 0).toBe(before);
    expect(await secretIn(p.id)).toBeNull();
  });

  it("only the roles a secret allows may use it: members, operators, and a starter demoted since are refused", async () => {
    const { asT, tenant, admin } = await setup();
    await putSecret(asT, "ADMIN_KEY", KEY);
    await putSecret(asT, "TEAM_KEY", `${KEY}-team`, "tenant_member");
    const member = await makeUser("tenant_member", tenant.id);
    const asMember = actorFor(tenantMemberPrincipal(tenant.id, member.id));
    const call = (secret: string, path = "/echo") => ({
      name: "x",
      kind: "http" as const,
      request: { url: `${base}${path}`, headers: { A: `\${secrets.${secret}}` } },
    });
    expect(await createPipeline(asMember, { name: unique("m"), steps: [call("ADMIN_KEY")] }).catch((e: unknown) => e)).toMatchObject({
      code: "validation_failed",
      details: [{ path: "steps[0].request.headers.A", message: expect.stringMatching(/for tenant admins' pipelines/) }],
    });
    expect((await createPipeline(asMember, { name: unique("m"), steps: [call("TEAM_KEY")] })).status).toBe("running");
    expect(
      await createPipeline(actorFor(operatorPrincipal), { name: unique("o"), tenant_id: tenant.id, steps: [call("TEAM_KEY")] }).catch(
        (e: unknown) => e,
      ),
    ).toMatchObject({ code: "validation_failed", details: [{ message: expect.stringMatching(/its own people start/) }] });
    // an admin starts one; demoted since, its calls no longer carry the admin-only key
    const p = await createPipeline(asT, { name: unique("a"), steps: [call("ADMIN_KEY", "/for-admins")] });
    const boss = await makeUser("tenant_admin", tenant.id);
    await updateUser(actorFor(tenantAdminPrincipal(tenant.id, boss.id)), admin.id, { role: "tenant_member" });
    await expect
      .poll(
        async () => (
          await runDueToolCalls({ allowedHosts: allowed }),
          (await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).status
        ),
      )
      .toBe("failed");
    expect((await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).steps[0]!.error).toMatch(
      /secrets\.ADMIN_KEY is for tenant admins' pipelines/,
    );
    expect(calls.get("/for-admins") ?? 0).toBe(0);
  });
});

describe("where http steps may go (issue 27)", () => {
  it("an allow-listed name that resolves to a loopback, private or metadata address is refused unless the operator allows the network", async () => {
    const { asT, tenant } = await setup();
    const port = new URL(base).port;
    const p = await createPipeline(asT, {
      name: unique("ssrf"),
      steps: [{ name: "x", kind: "http", request: { url: `http://localhost:${port}/echo` } }],
    }).catch((e: unknown) => e);
    // the operator's allow-list names localhost, but the address it resolves to is loopback
    expect(p).toMatchObject({ code: "validation_failed" });
    const q = await createPipeline(asT, { name: unique("ssrf"), steps: [{ name: "x", kind: "http", request: { url: `${base}/echo` } }] });
    const before = calls.get("/echo") ?? 0;
    await expect
      .poll(
        async () => (
          await runDueToolCalls({ allowedHosts: allowed, allowedNetworks: [] }),
          (await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), q.id)).status
        ),
      )
      .toBe("failed");
    expect((await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), q.id)).steps[0]!.error).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(calls.get("/echo") ?? 0).toBe(before);
    const meta = await createPipeline(asT, {
      name: unique("meta"),
      steps: [{ name: "x", kind: "http", request: { url: "http://169.254.169.254/latest/meta-data/" } }],
    }).catch((e: unknown) => e);
    expect(meta).toMatchObject({ code: "validation_failed" }); // not on the allow-list to begin with
  });

  it("the connection goes to the address that was checked, whatever the name would resolve to next (no DNS rebinding)", async () => {
    const port = Number(new URL(base).port);
    const url = new URL(`http://rebinding.invalid:${port}/echo`);
    // that name resolves to nothing at all; the request still reaches the pinned address, by it alone
    const res = await pinnedRequest(
      url,
      { address: "127.0.0.1", family: 4 },
      { method: "GET", headers: {}, signal: AbortSignal.timeout(5_000) },
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { headers: { host: string } }).headers.host).toBe(`rebinding.invalid:${port}`);
    await expect(resolveDestination(url, [])).rejects.toThrow(/does not resolve/);
    await expect(resolveDestination(new URL("http://[::ffff:127.0.0.1]:1/"), [])).rejects.toThrow(/loopback/);
  });
});

describe("fairness and suspension of tool calls (issue 27)", () => {
  it("one tenant's slow calls hold up only its own: at most its share in flight, and another tenant's call goes through meanwhile", async () => {
    const slow = await setup();
    const quick = await setup();
    const tag = unique("slow");
    const slowOnes = await Promise.all(
      Array.from({ length: 8 }, () =>
        createPipeline(slow.asT, {
          name: unique("s"),
          steps: [{ name: "x", kind: "http", request: { url: `${base}/hold?t=${tag}` }, timeout_s: 60 }],
        }),
      ),
    );
    const worker = runDueToolCalls({ allowedHosts: allowed, concurrency: 8, perTenant: 3 });
    await expect.poll(() => holding.get(tag) ?? 0).toBe(3);
    const fast = await createPipeline(quick.asT, {
      name: unique("f"),
      steps: [{ name: "x", kind: "http", request: { url: `${base}/echo` } }],
    });
    // the running worker takes it up within its refill, though three slow calls still hold
    await expect
      .poll(async () => (await getPipelineOrThrow(tenantAdminPrincipal(quick.tenant.id), fast.id)).status, { timeout: 10_000 })
      .toBe("completed");
    expect(holding.get(tag)).toBe(3);
    release(tag);
    await worker;
    expect(peak.get(tag)).toBe(3);
    for (const p of slowOnes) expect((await getPipelineOrThrow(tenantAdminPrincipal(slow.tenant.id), p.id)).status).toBe("completed");
  });

  it("suspending a tenant takes back its calls in flight: their answers change nothing, and they run again after reactivation", async () => {
    const { asT, tenant } = await setup();
    const tag = unique("susp");
    const p = await createPipeline(asT, {
      name: unique("s"),
      steps: [{ name: "x", kind: "http", request: { url: `${base}/hold?t=${tag}` }, timeout_s: 60 }],
    });
    const worker = runDueToolCalls({ allowedHosts: allowed });
    await expect.poll(() => holding.get(tag) ?? 0).toBe(1);
    await updateTenant(systemActor, tenant.id, { status: "suspended" });
    // the worker stops waiting for it (aborted within its refill) and records nothing
    expect(await worker).toMatchObject({ discarded: 1, completed: 0 });
    await expect.poll(() => holding.get(tag) ?? 0).toBe(0);
    expect(await db().pipelineStepOutput.count({ where: { pipelineId: p.id } })).toBe(0);
    expect(
      (await pipelineLog(tenantAdminPrincipal(tenant.id), p.id)).some((e) => /interrupted: the organisation was suspended/.test(e.message)),
    ).toBe(true);
    // while suspended nothing of it is claimed; reactivated, the call runs again
    expect((await runDueToolCalls({ allowedHosts: allowed })).claimed).toBe(0);
    release(tag);
    await updateTenant(systemActor, tenant.id, { status: "active" });
    await expect
      .poll(
        async () => (
          await runDueToolCalls({ allowedHosts: allowed }),
          (await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).status
        ),
      )
      .toBe("completed");
  });
});
