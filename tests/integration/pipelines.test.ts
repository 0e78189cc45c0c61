import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { finishJob } from "@/lib/jobs/finish-job";
import { createPipeline } from "@/lib/pipelines/create-pipeline";
import { getPipelineOrThrow } from "@/lib/pipelines/queries";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import {
  actorFor,
  agentPrincipal,
  inventory,
  makeCluster,
  makeTenant,
  operatorPrincipal,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";

const operator = actorFor(operatorPrincipal);

async function setup() {
  const cluster = await makeCluster();
  const gpuType = unique("P").replace(/-/g, "").slice(0, 12).toUpperCase();
  for (let i = 0; i < 2; i++) {
    const r = await registerNode(actorFor(agentPrincipal(cluster.id)), { hostname: unique("n"), gpus: inventory(8, gpuType) });
    await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), r.node.id, {});
  }
  const tenant = await makeTenant(16);
  return { gpuType, tenant, asT: actorFor(tenantAdminPrincipal(tenant.id)) };
}

const stepStatus = async (tenantId: string, id: string) =>
  Object.fromEntries((await getPipelineOrThrow(tenantAdminPrincipal(tenantId), id)).steps.map((s) => [s.name, s.status]));

async function completeRunning(pipelineId: string) {
  await runSchedulerCycle("test");
  const running = await db().job.findMany({ where: { pipelineId, status: "running" } });
  for (const j of running) await finishJob(operator, j.id, { status: "completed", exit_code: 0 });
  return running.length;
}

describe("pipelines", () => {
  it("runs fan-out and fan-in in dependency order, repeats a step, and completes", async () => {
    const { gpuType, tenant, asT } = await setup();
    const p = await createPipeline(asT, {
      name: "rag",
      steps: [
        { name: "prep", gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 },
        { name: "a", depends_on: ["prep"], gpu_count: 2, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 },
        { name: "b", depends_on: ["prep"], gpu_count: 2, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 },
        { name: "merge", depends_on: ["a", "b"], gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 2 },
      ],
    });
    expect(await stepStatus(tenant.id, p.id)).toEqual({ prep: "running", a: "waiting", b: "waiting", merge: "waiting" });
    expect(await completeRunning(p.id)).toBe(1);
    expect(await stepStatus(tenant.id, p.id)).toEqual({ prep: "completed", a: "running", b: "running", merge: "waiting" });
    expect(await completeRunning(p.id)).toBe(2);
    expect(await stepStatus(tenant.id, p.id)).toMatchObject({ merge: "running" });
    expect(await completeRunning(p.id)).toBe(1); // merge, run 1 of 2
    expect(await stepStatus(tenant.id, p.id)).toMatchObject({ merge: "running" });
    expect(await completeRunning(p.id)).toBe(1); // merge, run 2 of 2
    const done = await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id);
    expect(done.status).toBe("completed");
    expect(await db().job.count({ where: { pipelineId: p.id } })).toBe(5);
    const log = (await db().pipelineEvent.findMany({ where: { pipelineId: p.id }, orderBy: { id: "asc" } })).map((e) => e.message);
    expect(log).toContain("pipeline completed");
    expect(log).toContain("run 1 of 2 completed; starting run 2");
  });

  it("a step that fails for good skips its dependents and fails the pipeline", async () => {
    const { gpuType, tenant, asT } = await setup();
    const p = await createPipeline(asT, {
      name: "breaks",
      steps: [
        { name: "a", gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 },
        { name: "b", depends_on: ["a"], gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 },
        { name: "c", depends_on: ["b"], gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 },
      ],
    });
    await runSchedulerCycle("test");
    const job = await db().job.findFirstOrThrow({ where: { pipelineId: p.id } });
    await finishJob(operator, job.id, { status: "failed", exit_code: 1 });
    expect(await stepStatus(tenant.id, p.id)).toEqual({ a: "failed", b: "skipped", c: "skipped" });
    expect((await getPipelineOrThrow(tenantAdminPrincipal(tenant.id), p.id)).status).toBe("failed");
    expect(await db().job.count({ where: { pipelineId: p.id } })).toBe(1);
  });

  it("refuses cycles and unknown steps with 400 naming the field, and writes nothing", async () => {
    const { gpuType, tenant, asT } = await setup();
    const cycle = await createPipeline(asT, {
      name: "loop",
      steps: [
        { name: "x", depends_on: ["y"], gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 },
        { name: "y", depends_on: ["x"], gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 },
      ],
    }).catch((e) => e);
    expect(cycle.code).toBe("validation_failed");
    expect(cycle.details[0].message).toMatch(/cycle/);
    const unknown = await createPipeline(asT, {
      name: "ghost",
      steps: [{ name: "x", depends_on: ["nope"], gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 }],
    }).catch((e) => e);
    expect(unknown.details[0].path).toBe("steps[0].depends_on[0]");
    const tooBig = await createPipeline(asT, {
      name: "big",
      steps: [{ name: "x", gpu_count: 17, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 }],
    }).catch((e) => e);
    expect(tooBig).toMatchObject({ code: "unsatisfiable", details: [{ path: "steps[0].gpu_count" }] });
    expect(await db().pipeline.count({ where: { tenantId: tenant.id } })).toBe(0);
  });

  it("keeps pipelines to their tenant", async () => {
    const { gpuType, asT } = await setup();
    const p = await createPipeline(asT, {
      name: "private",
      steps: [{ name: "x", gpu_count: 1, gpu_type: gpuType, priority: 5, max_retries: 0, repeat: 1 }],
    });
    const other = await makeTenant(4);
    const err = await getPipelineOrThrow(tenantAdminPrincipal(other.id), p.id).catch((e) => e);
    expect(err.code).toBe("not_found");
  });
});
