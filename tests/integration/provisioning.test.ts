import { afterAll, describe, expect, it } from "vitest";
// the simulated BMCs of these tests listen on loopback: this deployment lists it, explicitly
process.env.BMC_NETWORKS = "127.0.0.0/8";
import { startSimBmc, type SimBmc, type SimBmcOptions } from "../../agent/src/sim-bmc";
import { powerNode } from "@/lib/bmc/power-node";
import { putBmc } from "@/lib/bmc/put-bmc";
import { getBmcOrThrow } from "@/lib/bmc/queries";
import { putBmcBody } from "@/lib/bmc/schemas";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { isAppError } from "@/lib/errors";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { acquireNodeLease, isStaleLease } from "@/lib/fleet/node-lease";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { visitProvisioning, type ProvisioningRunOptions, type VisitOutcome } from "@/lib/provisioning/advance-provisionings";
import { latestProvisioningOrThrow } from "@/lib/provisioning/queries";
import { startProvisioning } from "@/lib/provisioning/start-provisioning";
import { UPDATE_RUNNING_STEP } from "@/lib/provisioning/statements";
import { actorFor, agentPrincipal, operatorPrincipal, registeredFleet } from "../support/fixtures";

// Provisioning a node through its simulated BMC, against the real database: every step recorded
// with its Redfish requests, answers and timing under the node's lease; the agent's return moving
// the node on to inspection; each way it can fail quarantining the node with an alert; a stalled
// worker losing its lease to another that finishes the job.

const operator = actorFor(operatorPrincipal);
const IMAGE = "http://images.example/gpuforge-node-2026.12.iso";
const bmcs: SimBmc[] = [];
afterAll(async () => {
  await Promise.all(bmcs.map((b) => b.close()));
});

const fast: ProvisioningRunOptions = {
  inlineWaitMs: 150,
  retryBackoffMs: 20,
  leaseTtlMs: 5_000,
  timing: { powerPollMs: 20, taskPollMs: 20, backoffMs: 5, maxBackoffMs: 40, retries: 2, timeoutMs: 3_000 },
};

/** A registered node (never used: provisioning starts from there) with a simulated BMC whose boot brings its agent back. */
async function nodeWithBmc(sim: Partial<SimBmcOptions> = {}) {
  const { cluster, nodes } = await registeredFleet(1);
  const node = nodes[0]!.node;
  const agent = actorFor(agentPrincipal(cluster.id));
  const booted: Array<{ from: string; image: string | null }> = [];
  const bmc = await startSimBmc({
    hostname: node.hostname,
    timing: { powerMs: 40, bootMs: 40, taskMs: 200 },
    ...sim,
    on: sim.on ?? {
      // the node's OS is up: its agent heartbeats, as a real one does once it registered
      booted: (e) => {
        booted.push(e);
        void recordHeartbeat(agent, node.id, {});
      },
    },
  });
  bmcs.push(bmc);
  await putBmc(operator, node.id, putBmcBody.parse({ url: bmc.url, username: bmc.username, password: bmc.password, verify_tls: false }));
  return { node, cluster, bmc, booted };
}

async function visitUntil(workflowId: string, stop: (o: VisitOutcome) => boolean, opts: ProvisioningRunOptions = fast, max = 300) {
  const seen: VisitOutcome[] = [];
  for (let i = 0; i < max; i++) {
    const o = await visitProvisioning(workflowId, opts);
    seen.push(o);
    if (stop(o)) return seen;
    await new Promise((r) => setTimeout(r, 15));
  }
  throw new Error(`the provisioning did not get there in ${max} visits: ${seen.slice(-5).join(", ")}`);
}
const finished = (o: VisitOutcome) => o === "succeeded" || o === "failed" || o === "gone";
const statusOf = async (id: string) => (await db().node.findUniqueOrThrow({ where: { id }, select: { status: true } })).status;

describe("provisioning through Redfish", () => {
  it("powers off, swaps the media, sets a one-time CD boot, powers on, waits for the agent, and hands the node to inspection", async () => {
    const { node, bmc, booted } = await nodeWithBmc({ mediaOn: "System", resetInfo: "action_info" });
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    expect(started).toMatchObject({ status: "running", phase: "redfish", image_url: IMAGE, current_step: "discover" });
    expect(started.steps.map((s) => [s.name, s.status])).toEqual([
      ["discover", "pending"],
      ["power_off", "pending"],
      ["eject_media", "pending"],
      ["insert_media", "pending"],
      ["boot_override", "pending"],
      ["power_on", "pending"],
      ["wait_for_agent", "pending"],
    ]);
    expect(await statusOf(node.id)).toBe("provisioning");

    const visits = await visitUntil(started.id, finished);
    expect(visits.at(-1)).toBe("succeeded");
    const p = await latestProvisioningOrThrow(operatorPrincipal, node.id);
    // the workflow runs on into the node's inspection (the handover runner attests and ends it)
    expect(p).toMatchObject({ status: "running", phase: "inspection", current_step: null, failure: null });
    expect(p.steps.every((s) => s.status === "succeeded")).toBe(true);
    // each BMC step shows its requests with answers and timing; the last step waited for the agent
    for (const s of p.steps.slice(0, 6)) {
      expect(s.exchanges.length, s.name).toBeGreaterThan(0);
      expect(
        s.exchanges.every((e) => typeof e.duration_ms === "number" && e.at && e.method),
        s.name,
      ).toBe(true);
      expect(s.lease_token, s.name).toMatch(/^\d+$/);
    }
    const step = Object.fromEntries(p.steps.map((s) => [s.name, s]));
    expect(step.discover!.message).toContain(`virtual CD CD1 on the System`);
    expect(step.power_off!.exchanges.some((e) => e.method === "POST" && e.request?.includes("ForceOff"))).toBe(true);
    // the ResetType values came from the BMC's ActionInfo
    expect(step.power_off!.exchanges.some((e) => e.path.endsWith("/ResetActionInfo"))).toBe(true);
    // InsertMedia answered 202: its task was followed through the monitor until it completed
    expect(step.insert_media!.exchanges.some((e) => e.path.includes("/TaskMonitors/") && e.status === 202)).toBe(true);
    expect(
      step.boot_override!.exchanges.some((e) => e.method === "PATCH" && e.request?.includes('"BootSourceOverrideEnabled":"Once"')),
    ).toBe(true);
    expect(step.wait_for_agent!.exchanges).toEqual([]);
    expect(step.wait_for_agent!.message).toMatch(/heard from .* after the power-on/);
    // no password anywhere in what the steps kept
    expect(JSON.stringify(p)).not.toContain(bmc.password);

    // the BMC booted the image once from the virtual CD; the override was used up
    expect(booted).toEqual([{ from: "Cd", image: IMAGE }]);
    expect(bmc.state.boot.enabled).toBe("Disabled");
    expect(bmc.state.media.find((m) => m.id === "CD1")).toMatchObject({ inserted: true, image: IMAGE });
    // the node goes on to inspection (attestation), its lease given back, the BMC's contact recorded
    expect(await statusOf(node.id)).toBe("inspecting");
    // this runner has nothing more to do with it
    expect(await visitProvisioning(started.id, fast)).toBe("handed_over");
    const lease = await db().nodeLease.findUniqueOrThrow({ where: { nodeId: node.id } });
    expect(lease.releasedAt).not.toBeNull();
    expect((await getBmcOrThrow(operatorPrincipal, node.id)).discovered).toMatchObject({
      virtual_media_on: "System",
      virtual_media: `/redfish/v1/Systems/${bmc.systemId}/VirtualMedia/CD1`,
    });
    expect(bmc.sessions()).toBe(0);
    const events = await db().nodeEvent.findMany({
      where: { nodeId: node.id },
      orderBy: { id: "asc" },
      select: { fromStatus: true, toStatus: true, leaseToken: true },
    });
    expect(events.map((e) => `${e.fromStatus}→${e.toStatus}`)).toEqual(["registered→provisioning", "provisioning→inspecting"]);
    expect(events[1]!.leaseToken).not.toBeNull();
  });

  it("counts an agent that is back before the power state was read (a boot faster than the poll)", async () => {
    // no delay at all: the node boots, and its agent heartbeats, inside the reset
    const { node, booted } = await nodeWithBmc({ timing: { powerMs: 0, bootMs: 0, taskMs: 0 } });
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    expect((await visitUntil(started.id, finished, { ...fast, agentTimeoutMs: 5_000 })).at(-1)).toBe("succeeded");
    expect(booted).toEqual([{ from: "Cd", image: IMAGE }]);
  });

  it("fails with credentials refused: the node is quarantined and a critical alert names the step", async () => {
    const { node, bmc } = await nodeWithBmc();
    await bmc.fault("auth");
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    expect((await visitUntil(started.id, finished)).at(-1)).toBe("failed");
    const p = await latestProvisioningOrThrow(operatorPrincipal, node.id);
    expect(p).toMatchObject({ status: "failed", failure: { kind: "credentials_refused", step: "discover" } });
    expect(p.steps[0]).toMatchObject({ name: "discover", status: "failed" });
    expect(p.steps[0]!.exchanges.map((e) => e.status)).toContain(401);
    expect(await statusOf(node.id)).toBe("quarantined");
    const alert = await db().alertEvent.findFirstOrThrow({ where: { nodeId: node.id, ruleType: "provisioning_failed", status: "firing" } });
    expect(alert).toMatchObject({ severity: "critical", subjectType: "node" });
    expect(alert.message).toContain("BMC credentials refused");
    expect(alert.message).toContain("Discover the system");
    // a notification is queued for it (to the operator plane: this deployment has no email or webhook)
    expect(
      await db().notification.findMany({ where: { alertEventId: alert.id }, select: { kind: true, channel: true, subject: true } }),
    ).toEqual([{ kind: "firing", channel: "console", subject: expect.stringContaining("Provisioning failed") }]);

    // fixed and provisioned again (from quarantine): the alert resolves
    await bmc.fault("clear");
    const again = await startProvisioning(operator, node.id, { image_url: IMAGE });
    expect((await visitUntil(again.id, finished)).at(-1)).toBe("succeeded");
    expect((await db().alertEvent.findUniqueOrThrow({ where: { id: alert.id } })).status).toBe("resolved");
    expect(
      (await db().notification.findMany({ where: { alertEventId: alert.id }, select: { kind: true } })).map((n) => n.kind).sort(),
    ).toEqual(["firing", "resolved"]);
  });

  it("fails when the BMC refuses the image, and when the agent never comes back", async () => {
    const media = await nodeWithBmc();
    await media.bmc.fault("media_refused");
    const a = await startProvisioning(operator, media.node.id, { image_url: IMAGE });
    expect((await visitUntil(a.id, finished)).at(-1)).toBe("failed");
    expect(await latestProvisioningOrThrow(operatorPrincipal, media.node.id)).toMatchObject({
      failure: { kind: "media_refused", step: "insert_media" },
    });

    const silent = await nodeWithBmc({ on: {} });
    const b = await startProvisioning(operator, silent.node.id, { image_url: IMAGE });
    expect((await visitUntil(b.id, finished, { ...fast, agentTimeoutMs: 300 })).at(-1)).toBe("failed");
    const p = await latestProvisioningOrThrow(operatorPrincipal, silent.node.id);
    expect(p).toMatchObject({ failure: { kind: "agent_timeout", step: "wait_for_agent" } });
    expect(p.steps.slice(0, 6).every((s) => s.status === "succeeded")).toBe(true);
    expect(await statusOf(silent.node.id)).toBe("quarantined");
  });

  it("tries an unreachable BMC again with backoff, then gives up saying so", async () => {
    const { node, bmc } = await nodeWithBmc();
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    await bmc.fault("unreachable");
    const visits = await visitUntil(started.id, finished);
    expect(visits.filter((v) => v === "waiting").length).toBeGreaterThanOrEqual(3);
    const p = await latestProvisioningOrThrow(operatorPrincipal, node.id);
    expect(p).toMatchObject({ failure: { kind: "unreachable", step: "discover" } });
    expect(p.steps[0]!.message).toMatch(/^BMC unreachable/);
    await bmc.fault("clear");
  });

  it("rides out a BMC that is busy for a while (503 with Retry-After) without failing", async () => {
    const { node, bmc } = await nodeWithBmc();
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    await bmc.fault("not_ready", 2);
    expect((await visitUntil(started.id, finished)).at(-1)).toBe("succeeded");
    const p = await latestProvisioningOrThrow(operatorPrincipal, node.id);
    expect(p.steps[0]!.exchanges.filter((e) => e.quirk === "not_ready").length).toBeGreaterThan(0);
  });

  it("a stalled worker loses its lease; another takes over with a new token and finishes; the stalled one sends nothing more", async () => {
    const { node, bmc } = await nodeWithBmc();
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    let release!: () => void;
    const stalled = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atStall = new Promise<void>((r) => (reached = r));
    const a = visitProvisioning(started.id, {
      ...fast,
      holder: "worker-a",
      leaseTtlMs: 1_000,
      renew: false,
      beforeStep: async (name) => {
        if (name !== "power_off") return;
        reached();
        await stalled;
      },
    });
    await atStall;
    // while A holds a live lease, B is turned away
    expect(await visitProvisioning(started.id, { ...fast, holder: "worker-b" })).toBe("busy");
    await new Promise((r) => setTimeout(r, 1_200));
    const tokenA = (await db().nodeLease.findUniqueOrThrow({ where: { nodeId: node.id } })).token;
    const outcomesB = await visitUntil(started.id, finished, { ...fast, holder: "worker-b" });
    expect(outcomesB.at(-1)).toBe("succeeded");
    const requestsBefore = Object.values(bmc.requests).reduce((x, y) => x + y, 0);
    release();
    expect(await a).toBe("lost");
    expect(Object.values(bmc.requests).reduce((x, y) => x + y, 0)).toBe(requestsBefore);
    const p = await latestProvisioningOrThrow(operatorPrincipal, node.id);
    expect(p).toMatchObject({ status: "running", phase: "inspection" });
    const tokens = p.steps.map((s) => BigInt(s.lease_token!));
    // discover was A's; everything from power off on was written under B's newer tokens
    expect(tokens[0]).toBe(tokenA);
    expect(tokens.slice(1).every((t) => t > tokenA)).toBe(true);
  });

  it("refuses a step's progress written under a token that is no longer the node's", async () => {
    const { node } = await nodeWithBmc({ timing: { powerMs: 2_000, bootMs: 40, taskMs: 0 } });
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    expect(await visitProvisioning(started.id, fast)).toBe("waiting");
    const step = await db().nodeWorkflowStep.findFirstOrThrow({ where: { workflowId: started.id, status: "running" } });
    // the visit gave its lease back; the next holder has a newer token
    const next = await acquireNodeLease(pool(), {
      nodeId: node.id,
      purpose: "provisioning",
      workflowId: started.id,
      holder: "next",
      ttlMs: 5_000,
    });
    expect(BigInt(next!.token)).toBeGreaterThan(step.leaseToken!);
    const refused = await run(pool(), UPDATE_RUNNING_STEP, [String(step.id), node.id, String(step.leaseToken), {}, "from the past"]).catch(
      (e: unknown) => e,
    );
    expect(isStaleLease(refused)).toBe(true);
    expect(await run(pool(), UPDATE_RUNNING_STEP, [String(step.id), node.id, next!.token, { attempts: 1 }, "now"])).toHaveLength(1);
  });

  it("an operator stops a provisioning with maintenance: the lease is revoked and the worker finds nothing to do", async () => {
    const { node } = await nodeWithBmc({ timing: { powerMs: 2_000, bootMs: 40, taskMs: 0 } });
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    // discover, power off, the media, the boot override; then the power-on waits for the slow reset
    expect(await visitProvisioning(started.id, fast)).toBe("waiting");
    await changeNodeStatus(operator, node.id, "maintenance", "stop the provisioning");
    expect(await visitProvisioning(started.id, fast)).toBe("gone");
    const p = await latestProvisioningOrThrow(operatorPrincipal, node.id);
    expect(p.status).toBe("cancelled");
    expect(p.steps.filter((s) => s.status === "failed")).toMatchObject([
      { name: "power_on", message: expect.stringContaining("cancelled") },
    ]);
    expect(await statusOf(node.id)).toBe("maintenance");
    // nobody can hold the lease under the old token any more: a new workflow starts cleanly
    const lease = await acquireNodeLease(pool(), { nodeId: node.id, purpose: "provisioning", holder: "probe", ttlMs: 1_000 });
    expect(lease).not.toBeNull();
  });

  it("refuses what cannot be provisioned, and power while a provisioning runs", async () => {
    const { node } = await nodeWithBmc();
    const code = async (p: Promise<unknown>) => {
      const e = await p.then(
        () => null,
        (x: unknown) => x,
      );
      return isAppError(e) ? e.code : String(e);
    };
    // an available node must be taken out of service first
    await recordHeartbeat(actorFor(agentPrincipal((await db().node.findUniqueOrThrow({ where: { id: node.id } })).clusterId)), node.id, {});
    expect(await statusOf(node.id)).toBe("available");
    expect(await code(startProvisioning(operator, node.id, { image_url: IMAGE }))).toBe("invalid_transition");
    await changeNodeStatus(operator, node.id, "maintenance");
    const started = await startProvisioning(operator, node.id, { image_url: IMAGE });
    expect(await code(startProvisioning(operator, node.id, { image_url: IMAGE }))).toBe("invalid_transition");
    expect(await code(powerNode(operator, node.id, "off"))).toBe("conflict");
    expect(started.status).toBe("running");
    // a node without a BMC is refused before anything changes
    const { nodes } = await registeredFleet(1);
    expect(await code(startProvisioning(operator, nodes[0]!.node.id, { image_url: IMAGE }))).toBe("conflict");
    expect(await statusOf(nodes[0]!.node.id)).toBe("registered");
  });
});
