import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { actorFor, availableFleet, makeTenant, tenantAdminPrincipal } from "../support/fixtures";

// A cycle woken by an event reads only the work it could place now: waiting jobs of GPU types with
// a free GPU (lib/scheduler/cycle-facts.ts). Work of a full type keeps its place and its reason
// until the sweep, which reads everything, says what changed for it.

const status = (id: string) => db().job.findUniqueOrThrow({ where: { id }, select: { status: true, pendingReason: true } });

describe("what a cycle woken by an event reads", () => {
  it("places work of a type with free GPUs, leaves a full type's queue to the sweep, and the sweep then gives it its reason", async () => {
    const full = await availableFleet(1);
    const open = await availableFleet(1);
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const filler = await submitJob(asT, { name: "filler", gpu_count: 8, gpu_type: full.gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test: fill", { scope: "placeable" });
    expect((await status(filler.id)).status).toBe("running");

    const behind = await submitJob(asT, { name: "behind", gpu_count: 4, gpu_type: full.gpuType, priority: 1, max_retries: 0 });
    const free = await submitJob(asT, { name: "free", gpu_count: 2, gpu_type: open.gpuType, priority: 9, max_retries: 0 });
    const before = (await status(behind.id)).pendingReason;
    await runSchedulerCycle("test: an event", { scope: "placeable" });
    // the job for free GPUs runs although a better-priority job of a full type waits
    expect((await status(free.id)).status).toBe("running");
    // the full type's job was not read: its reason is still the one it was submitted with
    expect(await status(behind.id)).toEqual({ status: "queued", pendingReason: before });

    await runSchedulerCycle("test: the sweep");
    expect((await status(behind.id)).pendingReason).toMatch(new RegExp(`Needs 4 free ${full.gpuType} GPUs; 0 free now`));
  });

  it("reads nothing when no GPU is free anywhere it may look, and the sweep still does", async () => {
    const fleet = await availableFleet(1, 2);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    await submitJob(asT, { name: "all", gpu_count: 2, gpu_type: fleet.gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test: fill", { scope: "placeable" });
    const waiting = await submitJob(asT, { name: "waits", gpu_count: 2, gpu_type: fleet.gpuType, priority: 5, max_retries: 0 });
    // other tests' fleets share this database, so a placeable cycle may find their free GPUs; what
    // matters is that this job, of a full type, is not among what it considered
    await runSchedulerCycle("test: an event", { scope: "placeable" });
    expect((await status(waiting.id)).pendingReason).toBe("Waiting for the next scheduling cycle");
    await runSchedulerCycle("test: the sweep");
    expect((await status(waiting.id)).pendingReason).toMatch(/Needs 2 free .* GPUs; 0 free now/);
  });
});
