import { describe, expect, it } from "vitest";
import { db, pool } from "@/lib/db/client";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { reconcileEndpoints } from "@/lib/endpoints/reconcile-endpoints";
import { HANDOVER_STATUSES } from "@/lib/fleet/node-lifecycle";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { submitJob } from "@/lib/jobs/submit-job";
import { createPod } from "@/lib/pods/create-pod";
import { createPodBody } from "@/lib/pods/schemas";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { actorFor, agentPrincipal, availableFleet, inventory, makeTenant, tenantAdminPrincipal, unique } from "../support/fixtures";

// Nothing is placed, started or booked onto a node in a handover or provisioning state: the
// database refuses it whatever writes it (the scheduler's own checks are not what is tested here).
// One node (A) runs a job, a pod and a replica placed the normal way; the second (B) is put in each
// handover state in turn, and moving each holding's allocation onto B, or booking B, is refused.

async function world() {
  const f = await availableFleet(1, 8, "H");
  const t = await makeTenant(64);
  const asT = actorFor(tenantAdminPrincipal(t.id));
  const job = await submitJob(asT, { name: unique("j"), gpu_count: 1, gpu_type: f.gpuType, priority: 5, max_retries: 0, duration_s: 3600 });
  const pod = await createPod(
    asT,
    createPodBody.parse({ name: unique("pod"), gpu_type: f.gpuType, gpu_count: 1, image: "runpod/pytorch:2.4.0" }),
  );
  await runSchedulerCycle("test");
  const endpoint = await createEndpoint(asT, {
    name: unique("ep"),
    model: "m",
    gpu_type: f.gpuType,
    gpus_per_replica: 1,
    replicas: 1,
    autoscale_metric: "none",
    cooldown_s: 300,
  });
  await reconcileEndpoints();
  const replica = await db().endpointReplica.findFirstOrThrow({ where: { endpointId: endpoint.id }, select: { id: true } });
  const agent = actorFor(agentPrincipal(f.cluster.id));
  const b = await registerNode(agent, {
    hostname: unique("b"),
    capabilities: { containers: true, runtime: "docker test" },
    gpus: inventory(8, f.gpuType),
  });
  await recordHeartbeat(agent, b.node.id, {});
  expect(await db().gpu.count({ where: { allocatedJobId: job.id } })).toBe(1);
  expect(await db().gpu.count({ where: { allocatedPodId: pod.id } })).toBe(1);
  return { f, t, job, pod, replica, b: b.node, bGpus: b.gpus.map((g) => g.id) };
}

const setStatus = (nodeId: string, status: string) => pool().query(`UPDATE nodes SET status = $2 WHERE id = $1`, [nodeId, status]);

describe("a node in a handover or provisioning state takes no work and no booking", () => {
  it.each(HANDOVER_STATUSES)(
    "%s: the database refuses a job's, a pod's and a replica's GPU, and a reservation's holding",
    async (status) => {
      const w = await world();
      await setStatus(w.b.id, status);
      const gpu = w.bGpus[0]!;
      await expect(pool().query(`UPDATE gpus SET allocated_job_id = $1 WHERE id = $2`, [w.job.id, gpu])).rejects.toThrow(
        /not available for new work/,
      );
      await expect(pool().query(`UPDATE gpus SET allocated_pod_id = $1 WHERE id = $2`, [w.pod.id, gpu])).rejects.toThrow(
        /not available for a new pod/,
      );
      await expect(pool().query(`UPDATE gpus SET allocated_replica_id = $1 WHERE id = $2`, [w.replica.id, gpu])).rejects.toThrow(
        /not available for a new replica/,
      );
      const r = await db().reservation.create({
        data: {
          tenantId: w.t.id,
          gpuType: w.f.gpuType,
          nodeCount: 1,
          startsAt: new Date(Date.now() + 3_600_000),
          endsAt: new Date(Date.now() + 7_200_000),
          createdBy: "test",
        },
      });
      const booking = await pool()
        .query(
          `INSERT INTO reservation_nodes (reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at) VALUES ($1, $2, $3, 8, $4, $5)`,
          [r.id, w.t.id, w.b.id, r.startsAt, r.endsAt],
        )
        .catch((e: { code?: string }) => e.code);
      expect(booking).toBe("23P01");
      // nothing moved: the holdings are where the scheduler put them
      expect(
        await db().gpu.count({
          where: {
            nodeId: w.b.id,
            OR: [{ allocatedJobId: { not: null } }, { allocatedPodId: { not: null } }, { allocatedReplicaId: { not: null } }],
          },
        }),
      ).toBe(0);
      // the same writes succeed once the node is back in service (the refusal was the state's)
      await setStatus(w.b.id, "available");
      await expect(
        pool().query(
          `INSERT INTO reservation_nodes (reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at) VALUES ($1, $2, $3, 8, $4, $5)`,
          [r.id, w.t.id, w.b.id, r.startsAt, r.endsAt],
        ),
      ).resolves.toBeDefined();
    },
  );

  it("the scheduler places nothing there either: a waiting job stays queued while its only node is wiping", async () => {
    const f = await availableFleet(1, 8, "H");
    await setStatus(f.nodes[0]!.node.id, "wiping");
    const t = await makeTenant(64);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "w",
      gpu_count: 1,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("queued");
    await setStatus(f.nodes[0]!.node.id, "available");
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
  });
});

describe("the node states in the database", () => {
  it("takes each new state, and an offline node remembers each but provisioning's own silence", async () => {
    const f = await availableFleet(1, 1, "H");
    const id = f.nodes[0]!.node.id;
    for (const s of HANDOVER_STATUSES) {
      await setStatus(id, s);
      await pool().query(`UPDATE nodes SET status = 'offline', status_before_offline = $2 WHERE id = $1`, [id, s]);
      await pool().query(`UPDATE nodes SET status = $2, status_before_offline = NULL WHERE id = $1`, [id, s]);
    }
    await expect(setStatus(id, "wiped")).rejects.toMatchObject({ code: "23514" });
  });

  it("refuses a node in service while a handover is due", async () => {
    const f = await availableFleet(1, 1, "H");
    const id = f.nodes[0]!.node.id;
    await expect(pool().query(`UPDATE nodes SET handover_due_since = now() WHERE id = $1`, [id])).rejects.toMatchObject({ code: "23514" });
    await pool().query(`UPDATE nodes SET status = 'releasing', handover_due_since = now() WHERE id = $1`, [id]);
    await expect(setStatus(id, "available")).rejects.toMatchObject({ code: "23514" });
    await pool().query(`UPDATE nodes SET status = 'available', handover_due_since = NULL WHERE id = $1`, [id]);
  });
});
