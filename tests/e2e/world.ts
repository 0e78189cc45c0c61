import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPolicy } from "@/lib/attestation/create-policy";
import { enrolIdentity } from "@/lib/attestation/enrol-identity";
import { advanceHandovers } from "@/lib/handover/run-handovers";
import { startHandover } from "@/lib/handover/start-handover";
import { measureBoot } from "../../agent/src/sim-boot";
import { SimulatedTpm } from "../../agent/src/sim-tpm";
import { goldenPolicyBody } from "../support/handover-agent";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { systemActor } from "@/lib/auth/principal";
import { createServiceAccount } from "@/lib/service-accounts/service-accounts";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { submitJob } from "@/lib/jobs/submit-job";
import { createPipeline } from "@/lib/pipelines/create-pipeline";
import { createAlertRule } from "@/lib/alerts/alert-rules";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { payInvoice } from "@/lib/billing/pay-invoice";
import { createDemoRequest } from "@/lib/marketing/site";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { createEndpointKey } from "@/lib/endpoints/endpoint-keys";
import { changePodState } from "@/lib/pods/change-pod-state";
import { createPod } from "@/lib/pods/create-pod";
import { createPodBody } from "@/lib/pods/schemas";
import { db } from "@/lib/db/client";
import { createReservation } from "@/lib/reservations/create-reservation";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createCluster } from "@/lib/fleet/create-cluster";
import { reportSlurmCluster } from "@/lib/slurm/report-cluster";
import {
  actorFor,
  agentPrincipal,
  inventory,
  makeCluster,
  makeKey,
  makeTenant,
  makeUser,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { api } from "../support/http";
import { putSecret } from "@/lib/secrets/secrets";
import { runDueToolCalls } from "@/lib/pipelines/tool-calls/run-tool-calls";
import { resetTokens, signupTokens, WALK_PASSWORD } from "../support/account-tokens";
import { bmcWorld, nodeWithSimBmc } from "./world-bmc";

// The cast of the isolation and bad-input walks: tenant A (whose objects are the targets),
// tenant B (the neighbour), agent keys, a revoked key, an operator, and a workload: the
// placement-scoped token a job container of tenant A holds (what a compromised container has).
export type ActorName = "anonymous" | "revoked" | "agent" | "other_tenant" | "own_tenant" | "operator" | "workload";
export const ACTORS: ActorName[] = ["anonymous", "revoked", "agent", "other_tenant", "own_tenant", "operator", "workload"];

export async function buildWorld() {
  const a = await makeTenant(32);
  const b = await makeTenant(32);
  const clusterC = await makeCluster();
  const clusterD = await makeCluster();
  const keys: Record<ActorName, string | undefined> = {
    anonymous: undefined,
    revoked: undefined,
    agent: (await makeKey({ scope: "agent", cluster_id: clusterC.id })).key,
    other_tenant: (await makeKey({ scope: "tenant", tenant_id: b.id })).key,
    own_tenant: (await makeKey({ scope: "tenant", tenant_id: a.id })).key,
    operator: (await makeKey({ scope: "operator" })).key,
    workload: undefined,
  };
  const revoked = await makeKey({ scope: "tenant", tenant_id: a.id });
  await revokeApiKey(systemActor, revoked.apiKey.id);
  keys.revoked = revoked.key;
  // a node in the agent's cluster (C) and one in cluster D, which that agent must never see
  const agentC = { principal: agentPrincipal(clusterC.id) };
  const containers = { containers: true, runtime: "docker walk" };
  // a GPU type of this world's own: work an earlier walk left queued never lands on its nodes
  const gpuType = unique("W").replace(/-/g, "").slice(0, 12).toUpperCase();
  // node C: a GPU each for tenant A's job, endpoint replica and pod there
  const nodeC = await registerNode(agentC, { hostname: unique("c-node"), capabilities: containers, gpus: inventory(3, gpuType) });
  // node D has room for tenant A's endpoint replica (1 GPU) besides the jobs the walk runs there
  const nodeD = await registerNode(
    { principal: agentPrincipal(clusterD.id) },
    { hostname: unique("d-node"), capabilities: containers, gpus: inventory(4, gpuType) },
  );
  await recordHeartbeat(agentC, nodeC.node.id, {});
  await recordHeartbeat({ principal: agentPrincipal(clusterD.id) }, nodeD.node.id, {});
  // nodes nothing else runs on, of a type of their own: the walk's reservations book them
  const reservableType = unique("RV").replace(/-/g, "").slice(0, 12).toUpperCase();
  for (let i = 0; i < 2; i++) {
    const r = await registerNode(
      { principal: agentPrincipal(clusterD.id) },
      { hostname: unique("r-node"), pod: "walk-pod", rack: "walk-rack", capabilities: containers, gpus: inventory(2, reservableType) },
    );
    await recordHeartbeat({ principal: agentPrincipal(clusterD.id) }, r.node.id, {});
  }
  // a node of a GPU type of its own in cluster D, for the walk's pods (placed or waiting, they never crowd the others)
  const podType = unique("PD").replace(/-/g, "").slice(0, 12).toUpperCase();
  const podNode = await registerNode(
    { principal: agentPrincipal(clusterD.id) },
    { hostname: unique("p-node"), capabilities: containers, gpus: inventory(2, podType) },
  );
  await recordHeartbeat({ principal: agentPrincipal(clusterD.id) }, podNode.node.id, {});
  // a Slurm cluster (S), its one node mirrored by its bridge: agent C's key never speaks for it
  const clusterS = await createCluster(systemActor, { name: unique("walk-slurm"), region: null, provider: null, kind: "slurm" });
  const bridgeS = { principal: agentPrincipal(clusterS.id) };
  const slurmType = unique("SL").replace(/-/g, "").slice(0, 12).toUpperCase();
  const slurmIdle = { state: "IDLE", partitions: ["gpu"], cpus: 64, gres: "gpu:h100:1" };
  const nodeS = await registerNode(bridgeS, {
    hostname: unique("s-node"),
    capabilities: { containers: true, runtime: "slurm oci" },
    gpus: inventory(1, slurmType),
    slurm: slurmIdle,
  });
  await recordHeartbeat(bridgeS, nodeS.node.id, { slurm: slurmIdle });
  const slurmBridgeId = randomUUID();
  await reportSlurmCluster(bridgeS, clusterS.id, slurmPicture(slurmBridgeId));
  // an alert about tenant A's work, a rule to edit, for the alert operations
  const alertOfA = await db().alertEvent.create({
    data: {
      ruleType: "job_moved",
      dedupeKey: unique("walk-alert"),
      subjectType: "job",
      subjectId: unique("job"),
      subjectLabel: "walk job",
      tenantId: a.id,
      severity: "warning",
      message: "moved for the walk",
    },
  });
  const rule = await createAlertRule(systemActor, {
    name: unique("walk-rule"),
    rule_type: "gpu_temperature",
    cluster_id: clusterD.id,
    severity: "warning",
    enabled: false,
    notify: false,
    auto_remediate: false,
  });
  // tenant A's endpoint, served in cluster D: agent C has nothing to do with it
  const asA = { principal: { kind: "tenant" as const, tenantId: a.id, role: "tenant_admin" as const, label: "walk" } };
  const endpointOfA = await createEndpoint(asA, endpointBody(clusterD.id, nodeD.gpus[0]!.gpuType));
  // work of tenant A on node C, the agent's own node: what the agent's fenced reports are about
  const jobOnC = await submitJob(asA, {
    name: unique("walk-on-c"),
    gpu_count: 1,
    gpu_type: nodeC.gpus[0]!.gpuType,
    cluster_id: clusterC.id,
    priority: 1,
    max_retries: 0,
    image: "alpine:3.20",
    command: "sleep 3600",
  });
  // work of tenant A on the Slurm cluster: what its bridge's fenced Slurm reports are about
  const jobOnS = await submitJob(asA, {
    name: unique("walk-on-s"),
    gpu_count: 1,
    gpu_type: slurmType,
    cluster_id: clusterS.id,
    priority: 1,
    max_retries: 0,
    image: "alpine:3.20",
    command: "sleep 3600",
  });
  // tenant A's pods: one on node C (what agent C's fenced reports are about), one on cluster D's pod node (none of agent C's business)
  const podOnC = await createPod(
    asA,
    createPodBody.parse({
      name: unique("walk-pod-c"),
      gpu_type: nodeC.gpus[0]!.gpuType,
      gpu_count: 1,
      image: "alpine:3.20",
      cluster_id: clusterC.id,
    }),
  );
  const podOnD = await createPod(
    asA,
    createPodBody.parse({ name: unique("walk-pod-d"), gpu_type: podType, gpu_count: 1, image: "alpine:3.20", cluster_id: clusterD.id }),
  );
  await runSchedulerCycle("walk");
  const endpointOnC = await createEndpoint(asA, endpointBody(clusterC.id, nodeC.gpus[0]!.gpuType));
  const placementOnC = await db().job.findUniqueOrThrow({
    where: { id: jobOnC.id },
    select: { attempts: true, fence: true, status: true },
  });
  const replicaOnC = await db().endpointReplica.findFirstOrThrow({
    where: { endpointId: endpointOnC.id, status: { not: "stopped" } },
    select: { id: true, fence: true },
  });
  if (placementOnC.status !== "running") throw new Error("the walk's job on node C did not start");
  const placementOnS = await db().job.findUniqueOrThrow({
    where: { id: jobOnS.id },
    select: { attempts: true, fence: true, status: true },
  });
  if (placementOnS.status !== "running") throw new Error("the walk's job on the Slurm cluster was not placed");
  const podPlacement = async (id: string) => {
    const x = await db().pod.findUniqueOrThrow({ where: { id }, select: { attempts: true, fence: true, status: true } });
    if (x.status !== "starting" || !x.fence) throw new Error(`the walk's pod ${id} was not placed`);
    return { id, attempt: x.attempts, fence: x.fence };
  };
  // the job container's own credential, as the server hands it to the agent in the heartbeat
  const beat = await api("POST", `/api/clusters/nodes/${nodeC.node.id}/heartbeat`, { key: keys.agent, body: {} });
  keys.workload = (beat.body.assignments as Array<{ kind: string; job_id?: string; report_token: string }>).find(
    (x) => x.kind === "job" && x.job_id === jobOnC.id,
  )?.report_token;
  if (!keys.workload) throw new Error("the heartbeat did not hand out the job's report token");
  const w0 = {
    a,
    b,
    clusterC,
    clusterD,
    keys,
    nodeC,
    nodeD,
    reservableType,
    alertOfA,
    rule,
    endpointOfA,
    jobOnC: { id: jobOnC.id, attempt: placementOnC.attempts, fence: placementOnC.fence! },
    clusterS,
    nodeS,
    slurmBridgeId,
    jobOnS: { id: jobOnS.id, attempt: placementOnS.attempts, fence: placementOnS.fence! },
    replicaOnC: { endpointId: endpointOnC.id, ...replicaOnC },
    podType,
    podOnC: await podPlacement(podOnC.id),
    podOnD: await podPlacement(podOnD.id),
  };
  const demoRequest = await createDemoRequest({ name: "Walk Visitor", email: `${unique("visitor")}@example.test` });
  // mailed links' tokens work once: enough for every caller of every walk
  const tokens = {
    verify: await signupTokens(30, "verify_email"),
    discard: await signupTokens(30, "discard_signup"),
    reset: await resetTokens(30, w0.a.id),
  };
  const userOfA = await makeUser("tenant_member", w0.a.id);
  const bmc = await bmcWorld(keys.operator!, clusterD.id);
  // attestation: a policy to read and version; a node of tenant A's (held now) whose verdicts A may read
  const policy = await createPolicy(systemActor, { name: unique("walk-policy"), ...goldenPolicyBody() });
  const receivedType = unique("RC").replace(/-/g, "").slice(0, 12).toUpperCase();
  const received = await registerNode(
    { principal: agentPrincipal(clusterD.id) },
    { hostname: unique("rc-node"), capabilities: containers, gpus: inventory(2, receivedType) },
  );
  await recordHeartbeat({ principal: agentPrincipal(clusterD.id) }, received.node.id, {});
  await createReservation(
    { principal: { kind: "tenant", tenantId: a.id, role: "tenant_admin", label: "walk" } },
    {
      gpu_type: receivedType,
      node_count: 1,
      starts_at: new Date().toISOString(),
      ends_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
  );
  // what a node's TPM sends: a quote over a nonce the control plane never issued (a failing verdict, but evidence all the same)
  const tpm = new SimulatedTpm(mkdtempSync(path.join(os.tmpdir(), "walk-tpm-")));
  const bootLog = await measureBoot(tpm);
  const neverIssued = randomBytes(32).toString("hex");
  const quoted = tpm.quote(neverIssued, [0, 1, 2, 3, 4, 5, 6, 7]);
  const attestation = {
    policy,
    receivedNodeOfA: received.node.id,
    identity: tpm.identity(),
    evidence: {
      nonce: neverIssued,
      tpm: { quote: quoted.quote.toString("base64"), signature: quoted.signature.toString("base64"), pcrs: quoted.pcrs },
      event_log: bootLog.toString("base64"),
    },
  };
  return {
    ...w0,
    invoiceOfA: await pendingInvoiceOfA(w0),
    demoRequest,
    reservationOfA: await reservationOfA(w0),
    tokens,
    userOfA,
    bmc,
    attestation,
  };
}

/** A fresh node of cluster C (the walk agent's own), in service: what its agent attests. */
async function nodeOfC(w: { clusterC: { id: string } }): Promise<string> {
  const agent = { principal: agentPrincipal(w.clusterC.id) };
  // no GPUs: cluster C's GPUs stay node C's alone (the lists walk checks the agent sees exactly those)
  const n = await registerNode(agent, { hostname: unique("att-node"), gpus: [] });
  await recordHeartbeat(agent, n.node.id, {});
  return n.node.id;
}

/** A fresh node of cluster C at the wipe step of a handover: what a wipe report is about. */
async function wipingNodeOfC(w: { clusterC: { id: string } }): Promise<string> {
  const id = await nodeOfC(w);
  await startHandover(systemActor, id, { mode: "full", reason: "walk" });
  for (let i = 0; i < 50; i++) {
    await advanceHandovers({ nodeIds: [id], holder: "walk" });
    if ((await db().node.findUniqueOrThrow({ where: { id }, select: { status: true } })).status === "wiping") return id;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the walk's node did not reach its wipe");
}

/** A fresh node of cluster C with a pinned attestation key (re-enrolling consumes it). */
async function enrolledNodeOfC(w: World): Promise<string> {
  const id = await nodeOfC(w);
  await enrolIdentity({ principal: agentPrincipal(w.clusterC.id) }, id, { ...w.attestation.identity, tpm_kind: "simulated" });
  return id;
}

/**
 * A one-hour window somewhere in the coming months, at a random hour: the walk's bookings (and
 * their one-hour extensions) on the two reservable nodes practically never meet.
 */
function randomWindow() {
  const start = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + (24 + Math.floor(Math.random() * 24 * 300)) * 3_600_000;
  return { starts_at: new Date(start).toISOString(), ends_at: new Date(start + 3_600_000).toISOString() };
}

/** A fresh reservation of tenant A (extending, cancelling or releasing consumes it). */
async function reservationOfA(w: { a: { id: string }; reservableType: string }) {
  const r = await createReservation(
    { principal: { kind: "tenant", tenantId: w.a.id, role: "tenant_admin", label: "walk" } },
    { gpu_type: w.reservableType, node_count: 1, ...randomWindow() },
  );
  lastReservationEnd = r.endsAt.getTime();
  return r.id;
}
let lastReservationEnd = 0;

function endpointBody(clusterId: string, gpuType: string) {
  return {
    name: unique("walk-ep"),
    model: "walk/model",
    gpu_type: gpuType,
    gpus_per_replica: 1,
    replicas: 1,
    cluster_id: clusterId,
    autoscale_metric: "none" as const,
    cooldown_s: 300,
  };
}

/** Billed usage of tenant A inside a window of its own (a job that ran there); returns the window. */
async function usageWindowOfA(w: { a: { id: string }; nodeD: { gpus: Array<{ gpuType: string }> } }) {
  // a job that ended long ago, written as such: submitted and cancelled at once, the server's own
  // scheduler could start it in between, and the cancel then billed that run as attempt 1 (the
  // usage below collided with it: a duplicate final usage, the world never built)
  const job = await db().job.create({
    data: {
      tenantId: w.a.id,
      name: unique("walk-billed"),
      gpuCount: 1,
      gpuType: w.nodeD.gpus[0]!.gpuType,
      priority: 9,
      maxRetries: 0,
      status: "cancelled",
      finishedAt: new Date(),
    },
    select: { id: true },
  });
  const end = new Date(Date.now() - 1000 - Math.floor(Math.random() * 1e9));
  const start = new Date(end.getTime() - 3_600_000);
  await db().$executeRaw`
    INSERT INTO usage_events (tenant_id, job_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
    VALUES (${w.a.id}::uuid, ${job.id}::uuid, 1, 'final', 'invoice', 'H100', 1, ${start}, ${end}, 3600, 249, 249)`;
  return { period_start: new Date(start.getTime() - 1).toISOString(), period_end: end.toISOString() };
}

/** A pending invoice of tenant A, fresh per call (paying or voiding consumes it). */
async function pendingInvoiceOfA(w: Parameters<typeof usageWindowOfA>[0]): Promise<string> {
  const inv = await generateInvoice(systemActor, w.a.id, await usageWindowOfA(w));
  return inv.id;
}

/** A notification whose delivery failed, fresh per call (retrying consumes it). */
async function failedNotification(w: World): Promise<string> {
  const event = await db().alertEvent.create({
    data: {
      ruleType: "job_moved",
      dedupeKey: unique("walk-alert"),
      subjectType: "job",
      subjectId: unique("job"),
      subjectLabel: "walk job",
      tenantId: w.a.id,
      severity: "warning",
      message: "walk",
      status: "resolved",
      resolvedAt: new Date(),
    },
  });
  const n = await db().notification.create({
    data: {
      alertEventId: event.id,
      kind: "firing",
      channel: "webhook",
      target: unique("webhook"),
      subject: "walk",
      body: "walk",
      status: "failed",
      attempts: 12,
      lastError: "HTTP 503",
    },
  });
  return n.id;
}

async function pipelineOfA(w: World): Promise<string> {
  const p = await createPipeline(
    { principal: { kind: "tenant", tenantId: w.a.id, role: "tenant_admin", label: "walk" } },
    {
      name: unique("walk-pipeline"),
      steps: [{ name: "only", gpu_count: 1, gpu_type: w.nodeD.gpus[0]!.gpuType, priority: 5, max_retries: 0, repeat: 1 }],
    },
  );
  return p.id;
}

/**
 * A pipeline of tenant A whose only step failed for good (what a retry is about): an http step
 * whose templated host turns out to be off the allow-list when the call is made.
 */
async function failedPipelineOfA(w: World): Promise<string> {
  const p = await createPipeline(
    { principal: { kind: "tenant", tenantId: w.a.id, role: "tenant_admin", label: "walk" } },
    {
      name: unique("walk-failing"),
      steps: [{ name: "only", kind: "http", request: { url: "http://${pipeline.name}.invalid/" } }],
    },
  );
  for (let i = 0; i < 100; i++) {
    // the server's workers or this one, whichever claims the call first
    await runDueToolCalls({ allowedHosts: [] });
    if ((await db().pipeline.findUniqueOrThrow({ where: { id: p.id } })).status === "failed") return p.id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the walk's failing pipeline did not fail");
}

/** A secret of tenant A, fresh per call (deleting consumes it). */
async function secretOfA(w: World): Promise<string> {
  const name = `WALK_${randomUUID().slice(0, 8).toUpperCase()}`;
  await putSecret({ principal: { kind: "tenant", tenantId: w.a.id, role: "tenant_admin", label: "walk" } }, name, "walk-secret-value");
  return name;
}

/** A job of tenant A running on node D (so the cluster C agent must not see it). */
async function runningJobOfA(w: World): Promise<string> {
  const job = await submitJob(
    { principal: { kind: "tenant", tenantId: w.a.id, role: "tenant_admin", label: "walk" } },
    {
      name: unique("walk-job"),
      gpu_count: 1,
      gpu_type: w.nodeD.gpus[0]!.gpuType,
      cluster_id: w.clusterD.id,
      priority: 1,
      max_retries: 0,
    },
  );
  await runSchedulerCycle("walk");
  return job.id;
}

/** A fresh pod of tenant A (waiting, or placed on the pod node): stopping or terminating consumes it. */
async function podOfA(w: { a: { id: string }; clusterD: { id: string }; podType: string }, stopped = false): Promise<string> {
  const asA = { principal: { kind: "tenant" as const, tenantId: w.a.id, role: "tenant_admin" as const, label: "walk" } };
  const pod = await createPod(
    asA,
    createPodBody.parse({ name: unique("walk-pod"), gpu_type: w.podType, gpu_count: 1, image: "alpine:3.20", cluster_id: w.clusterD.id }),
  );
  if (stopped) await changePodState(asA, pod.id, "stop");
  return pod.id;
}

/** A fresh key of tenant A's endpoint (revoking consumes it). */
async function endpointKeyOfA(w: { a: { id: string }; endpointOfA: { id: string } }): Promise<string> {
  const made = await createEndpointKey(
    { principal: { kind: "tenant", tenantId: w.a.id, role: "tenant_admin", label: "walk" } },
    w.endpointOfA.id,
    { name: unique("walk-key") },
  );
  return made.endpointKey.id;
}

/** What a Slurm bridge reports of its cluster (the walk's one bridge, always the cluster's active one). */
const slurmPicture = (bridgeId: string) => ({
  bridge_id: bridgeId,
  bridge_host: "walk-login",
  slurm_cluster_name: "walk",
  slurm_version: "24.05.3",
  container_mode: "oci" as const,
  partitions: [{ name: "gpu", state: "UP", default: true, nodes: "s-node", node_count: 1, max_time_s: null, gpus: 1, cpus: 64 }],
});

export type World = Awaited<ReturnType<typeof buildWorld>>;

export interface OperationCase {
  /** a concrete path (ids filled in), made fresh per call where the call may consume it */
  path: () => Promise<string>;
  /** a valid body for the operator / own tenant (or `caller`), when the operation takes one */
  body?: () => Record<string, unknown>;
  /** who sends the bad-input battery and the valid body: the operator unless only others may call it */
  caller?: ActorName;
  /**
   * What the valid body answers on the walks' server when the deployment, not the input, decides:
   * the card deposit checkout answers 409 there (no Stripe key on that server; the self-service
   * walk, which runs a server with one, sees it succeed)
   */
  validStatus?: number;
  expect: Record<ActorName, number>;
}

const all = (n: number): Record<ActorName, number> => ({
  anonymous: n,
  revoked: n,
  agent: n,
  other_tenant: n,
  own_tenant: n,
  operator: n,
  workload: n,
});
/** A workload's token is refused (403) by every operation that does not list workloads. */
const authed = (agent: number, other: number, own: number, operator: number, workload = 403): Record<ActorName, number> => ({
  anonymous: 401,
  revoked: 401,
  agent,
  other_tenant: other,
  own_tenant: own,
  operator,
  workload,
});

let invoiceWindow: { period_start: string; period_end: string } | undefined;

/** One entry per operationId in the OpenAPI document; a missing entry fails the walk. */
export function operationCases(w: World): Record<string, OperationCase> {
  const fixed = (p: string) => async () => p;
  return {
    getHealth: { path: fixed("/api/health"), expect: all(200) },
    getOpenApi: { path: fixed("/api/openapi.json"), expect: all(200) },
    listAuditLog: { path: fixed("/api/audit-log"), expect: authed(403, 200, 200, 200) },
    exportAuditLog: { path: fixed("/api/audit-log/export?action=job."), expect: authed(403, 200, 200, 200) },

    createTenant: {
      path: fixed("/api/tenants"),
      body: () => ({ name: unique("walk"), gpu_quota: 4 }),
      expect: authed(403, 403, 403, 201),
    },
    listTenants: { path: fixed("/api/tenants"), expect: authed(403, 200, 200, 200) },
    getTenant: { path: fixed(`/api/tenants/${w.a.id}`), expect: authed(403, 404, 200, 200) },
    // a tenant admin may change its own tenant's burst only: the quota is refused; another tenant's is not found
    updateTenant: { path: fixed(`/api/tenants/${w.a.id}`), body: () => ({ gpu_quota: 32 }), expect: authed(403, 404, 403, 200) },

    // burst to GPU providers (issue 30): the operator's; a job's burst facts are its tenant's too
    listProviders: { path: fixed("/api/providers"), expect: authed(403, 403, 403, 200) },
    listProviderOffers: { path: fixed("/api/providers/offers?gpu_count=1"), expect: authed(403, 403, 403, 200) },
    refreshProviderOffers: { path: fixed("/api/providers/offers/refresh"), expect: authed(403, 403, 403, 202) },
    listProviderGpuMappings: { path: fixed("/api/providers/gpu-types"), expect: authed(403, 403, 403, 200) },
    setProviderGpuMapping: {
      path: fixed("/api/providers/gpu-types"),
      body: () => ({ provider: "vast", provider_gpu_type: "Walk GPU 9000", gpu_type: "WALK9000" }),
      expect: authed(403, 403, 403, 200),
    },
    clearProviderGpuMapping: {
      path: fixed("/api/providers/gpu-types?provider=vast&provider_gpu_type=Walk%20GPU%209000"),
      expect: authed(403, 403, 403, 200),
    },
    listProviderInstances: { path: fixed("/api/providers/instances"), expect: authed(403, 403, 403, 200) },
    getJobBurst: { path: async () => `/api/jobs/${await runningJobOfA(w)}/burst`, expect: authed(403, 404, 200, 200) },

    listUsers: { path: fixed("/api/users"), expect: authed(403, 200, 200, 200) },
    createUser: {
      path: fixed("/api/users"),
      body: () => ({
        email: `${unique("u")}@walk.test`,
        name: "Walker",
        password: "walk-password-123",
        role: "tenant_member",
        tenant_id: w.a.id,
      }),
      expect: authed(403, 403, 201, 201),
    },
    updateUser: {
      path: async () => `/api/users/${(await makeUser("tenant_member", w.a.id)).id}`,
      body: () => ({ name: "Renamed" }),
      expect: authed(403, 404, 200, 200),
    },

    createApiKey: {
      path: fixed("/api/api-keys"),
      body: () => ({ name: unique("k"), scope: "tenant", tenant_id: w.a.id }),
      expect: authed(403, 403, 201, 201),
    },
    listApiKeys: { path: fixed("/api/api-keys"), expect: authed(403, 200, 200, 200) },
    revokeApiKey: {
      path: async () => `/api/api-keys/${(await makeKey({ scope: "tenant", tenant_id: w.a.id })).apiKey.id}`,
      expect: authed(403, 404, 200, 200),
    },
    // service accounts are tenant A's: tenant B's admin neither sees them nor names A as its tenant
    listServiceAccounts: { path: fixed("/api/service-accounts"), expect: authed(403, 200, 200, 200) },
    createServiceAccount: {
      path: fixed("/api/service-accounts"),
      body: () => ({ name: unique("sa"), role: "tenant_member", tenant_id: w.a.id }),
      expect: authed(403, 404, 201, 201),
    },
    disableServiceAccount: {
      path: async () =>
        `/api/service-accounts/${(await createServiceAccount(actorFor(tenantAdminPrincipal(w.a.id)), { name: unique("sa"), role: "tenant_member" })).id}`,
      expect: authed(403, 404, 200, 200),
    },

    createCluster: { path: fixed("/api/clusters"), body: () => ({ name: unique("c") }), expect: authed(403, 403, 403, 201) },
    listClusters: { path: fixed("/api/clusters"), expect: authed(200, 200, 200, 200) },
    // cluster D is not the agent's cluster: the agent must not learn it exists
    getCluster: { path: fixed(`/api/clusters/${w.clusterD.id}`), expect: authed(404, 200, 200, 200) },
    updateCluster: {
      path: fixed(`/api/clusters/${w.clusterD.id}`),
      body: () => ({ region: `r-${randomUUID().slice(0, 4)}` }),
      expect: authed(403, 403, 403, 200),
    },
    deleteCluster: { path: async () => `/api/clusters/${(await makeCluster()).id}`, expect: authed(403, 403, 403, 204) },

    // Agents act in their own cluster (C); the operator names one. Node D belongs to cluster D.
    registerNode: {
      path: fixed("/api/clusters/nodes"),
      body: () => ({
        cluster_id: w.clusterC.id,
        hostname: w.nodeC.node.hostname,
        capabilities: { containers: true },
        gpus: inventoryOf(w.nodeC.gpus),
      }),
      expect: authed(200, 403, 403, 200),
    },
    nodeHeartbeat: {
      path: fixed(`/api/clusters/nodes/${w.nodeD.node.id}/heartbeat`),
      body: () => ({ gpus: [] }),
      expect: authed(404, 403, 403, 200),
    },
    postGpuMetrics: {
      path: fixed("/api/clusters/metrics"),
      body: () => ({
        metrics: [{ gpu_uuid: w.nodeC.gpus[0]!.uuid, utilization_pct: 50, memory_used_mb: 10, temperature_c: 50, power_draw_w: 100 }],
      }),
      expect: authed(202, 403, 403, 202),
    },
    listGpus: { path: fixed("/api/gpus"), expect: authed(200, 403, 403, 200) },
    getGpu: { path: fixed(`/api/gpus/${w.nodeD.gpus[0]!.id}`), expect: authed(404, 403, 403, 200) },
    getGpuMetrics: { path: fixed(`/api/gpus/${w.nodeD.gpus[0]!.id}/metrics`), expect: authed(404, 403, 403, 200) },
    listNodes: { path: fixed("/api/nodes"), expect: authed(200, 403, 403, 200) },
    getNode: { path: fixed(`/api/nodes/${w.nodeD.node.id}`), expect: authed(404, 403, 403, 200) },
    updateNode: {
      path: async () =>
        `/api/nodes/${(await registerNode({ principal: agentPrincipal(w.clusterD.id) }, { hostname: unique("q"), gpus: [] })).node.id}`,
      body: () => ({ status: "quarantined", reason: "walk" }),
      expect: authed(403, 403, 403, 200),
    },
    getDashboard: { path: fixed("/api/dashboard"), expect: authed(403, 403, 403, 200) },

    // BMCs and provisioning: operators only; a tenant, an agent (even of the node's cluster) or a workload never reaches any of it
    putNodeBmc: {
      path: fixed(`/api/nodes/${w.bmc.withBmc.nodeId}/bmc`),
      body: () => ({
        url: w.bmc.withBmc.bmc.url,
        username: w.bmc.withBmc.bmc.username,
        password: w.bmc.withBmc.bmc.password,
        verify_tls: false,
      }),
      expect: authed(403, 403, 403, 200),
    },
    getNodeBmc: { path: fixed(`/api/nodes/${w.bmc.withBmc.nodeId}/bmc`), expect: authed(403, 403, 403, 200) },
    deleteNodeBmc: {
      path: async () => `/api/nodes/${(await nodeWithSimBmc(w.keys.operator!, w.clusterD.id, { direct: true })).nodeId}/bmc`,
      expect: authed(403, 403, 403, 204),
    },
    powerNode: {
      path: fixed(`/api/nodes/${w.bmc.withBmc.nodeId}/power`),
      body: () => ({ action: "on" }),
      expect: authed(403, 403, 403, 202),
    },
    provisionNode: {
      path: async () => `/api/nodes/${(await nodeWithSimBmc(w.keys.operator!, w.clusterD.id, { direct: true })).nodeId}/provision`,
      body: () => ({ image_url: "http://images.example/walk.iso" }),
      expect: authed(403, 403, 403, 202),
    },
    getNodeProvisioning: { path: fixed(`/api/nodes/${w.bmc.provisioned.nodeId}/provisioning`), expect: authed(403, 403, 403, 200) },

    submitJob: {
      path: fixed("/api/jobs"),
      body: () => ({ name: unique("walk"), gpu_count: 1, gpu_type: w.nodeD.gpus[0]!.gpuType, tenant_id: w.a.id }),
      expect: authed(403, 403, 201, 201),
    },
    listJobs: { path: fixed("/api/jobs"), expect: authed(403, 200, 200, 200) },
    exportJobs: { path: fixed("/api/jobs/export?status=waiting&sort=queue"), expect: authed(403, 200, 200, 200) },
    getJob: { path: async () => `/api/jobs/${await runningJobOfA(w)}`, expect: authed(404, 404, 200, 200) },
    listJobEvents: { path: async () => `/api/jobs/${await runningJobOfA(w)}/events`, expect: authed(404, 404, 200, 200) },
    updateJob: {
      path: async () => `/api/jobs/${await runningJobOfA(w)}`,
      body: () => ({ status: "cancelled" }),
      expect: authed(404, 404, 200, 200),
    },
    runScheduler: { path: fixed("/api/scheduler/run"), expect: authed(403, 403, 403, 200) },
    // the agent of node C ships the output of tenant A's job there, fenced by its placement
    appendJobLogs: {
      path: fixed(`/api/jobs/${w.jobOnC.id}/logs`),
      body: () => ({
        attempt: w.jobOnC.attempt,
        fence: w.jobOnC.fence,
        chunks: [{ seq: Math.floor(Math.random() * 1e9), stream: "stdout", text: "walk\n" }],
      }),
      caller: "agent",
      expect: authed(202, 403, 403, 403),
    },
    readJobLogs: { path: fixed(`/api/jobs/${w.jobOnC.id}/logs`), expect: authed(403, 404, 200, 200) },
    // the Slurm cluster's bridge (its agent key, or an operator) reports; agent C's key is a stranger there
    reportSlurmCluster: {
      path: fixed(`/api/clusters/${w.clusterS.id}/slurm`),
      body: () => slurmPicture(w.slurmBridgeId),
      expect: authed(404, 403, 403, 200),
    },
    getSlurmCluster: { path: fixed(`/api/clusters/${w.clusterS.id}/slurm`), expect: authed(404, 403, 403, 200) },
    reportSlurmJob: {
      path: fixed(`/api/jobs/${w.jobOnS.id}/slurm`),
      body: () => ({ attempt: w.jobOnS.attempt, fence: w.jobOnS.fence, state: "PENDING", slurm_job_id: "4242", reason: "Priority" }),
      expect: authed(404, 403, 403, 200),
    },
    getJobSlurm: { path: fixed(`/api/jobs/${w.jobOnS.id}/slurm`), expect: authed(404, 404, 200, 200) },
    getJobGpuMetrics: { path: fixed(`/api/jobs/${w.jobOnC.id}/metrics`), expect: authed(403, 404, 200, 200) },
    appendReplicaLogs: {
      path: fixed(`/api/endpoints/${w.replicaOnC.endpointId}/replicas/${w.replicaOnC.id}/logs`),
      body: () => ({
        attempt: 1,
        fence: w.replicaOnC.fence,
        chunks: [{ seq: Math.floor(Math.random() * 1e9), stream: "stderr", text: "walk\n" }],
      }),
      caller: "agent",
      expect: authed(202, 403, 403, 403),
    },
    readEndpointLogs: { path: fixed(`/api/endpoints/${w.endpointOfA.id}/logs`), expect: authed(403, 404, 200, 200) },
    getEndpointGpuMetrics: { path: fixed(`/api/endpoints/${w.endpointOfA.id}/gpu-metrics`), expect: authed(403, 404, 200, 200) },

    // endpoints made by the walk go to cluster C, so they never take the GPUs node D's walk jobs need
    createEndpoint: {
      path: fixed("/api/endpoints"),
      body: () => ({ ...endpointBody(w.clusterC.id, w.nodeC.gpus[0]!.gpuType), tenant_id: w.a.id }),
      expect: authed(403, 403, 201, 201),
    },
    listEndpoints: { path: fixed("/api/endpoints"), expect: authed(403, 200, 200, 200) },
    getEndpoint: { path: fixed(`/api/endpoints/${w.endpointOfA.id}`), expect: authed(403, 404, 200, 200) },
    updateEndpoint: {
      path: fixed(`/api/endpoints/${w.endpointOfA.id}`),
      body: () => ({ sla_p95_ms: 600, sla_availability_pct: 99.5 }),
      expect: authed(403, 404, 200, 200),
    },
    deleteEndpoint: {
      path: async () =>
        `/api/endpoints/${(await createEndpoint({ principal: { kind: "tenant", tenantId: w.a.id, role: "tenant_admin", label: "walk" } }, endpointBody(w.clusterC.id, w.nodeC.gpus[0]!.gpuType))).id}`,
      expect: authed(403, 404, 204, 204),
    },
    postEndpointMetrics: {
      path: fixed(`/api/endpoints/${w.endpointOfA.id}/metrics`),
      body: () => ({ samples: [{ requests: 10, errors: 0, p50_ms: 20, p95_ms: 40, p99_ms: 60 }] }),
      // a job's token speaks for its job, not for any endpoint
      expect: authed(404, 404, 202, 202, 404),
    },
    getEndpointMetrics: { path: fixed(`/api/endpoints/${w.endpointOfA.id}/metrics`), expect: authed(403, 404, 200, 200) },
    getEndpointSla: { path: fixed(`/api/endpoints/${w.endpointOfA.id}/sla`), expect: authed(403, 404, 200, 200) },
    listEndpointEvents: { path: fixed(`/api/endpoints/${w.endpointOfA.id}/events`), expect: authed(403, 404, 200, 200) },
    // inference gateway plumbing: the agent of a replica's node reports its published port, fenced
    reportReplicaAddress: {
      path: fixed(`/api/endpoints/${w.replicaOnC.endpointId}/replicas/${w.replicaOnC.id}/address`),
      body: () => ({ attempt: 1, fence: w.replicaOnC.fence, host_port: 41_000 }),
      caller: "agent",
      expect: authed(202, 403, 403, 403),
    },
    createEndpointKey: {
      path: fixed(`/api/endpoints/${w.endpointOfA.id}/keys`),
      body: () => ({ name: unique("walk-key") }),
      expect: authed(403, 404, 201, 201),
    },
    listEndpointKeys: { path: fixed(`/api/endpoints/${w.endpointOfA.id}/keys`), expect: authed(403, 404, 200, 200) },
    revokeEndpointKey: {
      path: async () => `/api/endpoints/${w.endpointOfA.id}/keys/${await endpointKeyOfA(w)}`,
      expect: authed(403, 404, 200, 200),
    },

    // pods: tenant B never learns A's exist (404); only the agent of the pod's node reports on it
    createPod: {
      path: fixed("/api/pods"),
      body: () => ({
        name: unique("walk-pod"),
        gpu_type: w.podType,
        gpu_count: 1,
        image: "alpine:3.20",
        cluster_id: w.clusterD.id,
        tenant_id: w.a.id,
      }),
      expect: authed(403, 403, 201, 201),
    },
    listPods: { path: fixed("/api/pods"), expect: authed(403, 200, 200, 200) },
    getPod: { path: fixed(`/api/pods/${w.podOnC.id}`), expect: authed(403, 404, 200, 200) },
    listPodEvents: { path: fixed(`/api/pods/${w.podOnC.id}/events`), expect: authed(403, 404, 200, 200) },
    stopPod: { path: async () => `/api/pods/${await podOfA(w)}/stop`, expect: authed(403, 404, 200, 200) },
    startPod: { path: async () => `/api/pods/${await podOfA(w, true)}/start`, expect: authed(403, 404, 200, 200) },
    terminatePod: { path: async () => `/api/pods/${await podOfA(w)}`, expect: authed(403, 404, 200, 200) },
    reportPodStatus: {
      path: fixed(`/api/pods/${w.podOnC.id}/status`),
      body: () => ({ attempt: w.podOnC.attempt, fence: w.podOnC.fence, status: "running", ports: [] }),
      caller: "agent",
      expect: authed(202, 403, 403, 403),
    },
    appendPodLogs: {
      path: fixed(`/api/pods/${w.podOnC.id}/logs`),
      body: () => ({
        attempt: w.podOnC.attempt,
        fence: w.podOnC.fence,
        chunks: [{ seq: Math.floor(Math.random() * 1e9), stream: "stdout", text: "walk\n" }],
      }),
      caller: "agent",
      expect: authed(202, 403, 403, 403),
    },
    readPodLogs: { path: fixed(`/api/pods/${w.podOnC.id}/logs`), expect: authed(403, 404, 200, 200) },
    getPodGpuMetrics: { path: fixed(`/api/pods/${w.podOnC.id}/metrics`), expect: authed(403, 404, 200, 200) },

    createPipeline: {
      path: fixed("/api/pipelines"),
      body: () => ({
        name: unique("walk"),
        tenant_id: w.a.id,
        steps: [{ name: "only", gpu_count: 1, gpu_type: w.nodeD.gpus[0]!.gpuType }],
      }),
      expect: authed(403, 403, 201, 201),
    },
    listPipelines: { path: fixed("/api/pipelines"), expect: authed(403, 200, 200, 200) },
    getPipeline: { path: async () => `/api/pipelines/${await pipelineOfA(w)}`, expect: authed(403, 404, 200, 200) },
    getPipelineLog: { path: async () => `/api/pipelines/${await pipelineOfA(w)}/log`, expect: authed(403, 404, 200, 200) },
    getPipelineOutputs: { path: async () => `/api/pipelines/${await pipelineOfA(w)}/outputs`, expect: authed(403, 404, 200, 200) },
    cancelPipeline: { path: async () => `/api/pipelines/${await pipelineOfA(w)}/cancel`, expect: authed(403, 404, 200, 200) },
    retryPipelineStep: {
      path: async () => `/api/pipelines/${await failedPipelineOfA(w)}/steps/only/retry`,
      expect: authed(403, 404, 200, 200),
    },
    // the agent of node C, or the job container itself with its token, posts the job's outputs, fenced
    postJobOutputs: {
      path: fixed(`/api/jobs/${w.jobOnC.id}/outputs`),
      body: () => ({ attempt: w.jobOnC.attempt, fence: w.jobOnC.fence, outputs: { walk: Math.random() } }),
      caller: "agent",
      expect: authed(200, 403, 403, 403, 200),
    },
    listJobOutputs: { path: fixed(`/api/jobs/${w.jobOnC.id}/outputs`), expect: authed(403, 404, 200, 200) },
    // secrets are each tenant's own: B lists and writes its own, never A's; operators do not handle them
    listSecrets: { path: fixed("/api/secrets"), expect: authed(403, 200, 200, 403) },
    putSecret: {
      path: async () => `/api/secrets/WALK_${randomUUID().slice(0, 8).toUpperCase()}`,
      body: () => ({ value: "walk-secret-value" }),
      caller: "own_tenant",
      expect: authed(403, 201, 201, 403),
    },
    deleteSecret: { path: async () => `/api/secrets/${await secretOfA(w)}`, expect: authed(403, 404, 204, 403) },
    listSchedulerLogs: { path: fixed("/api/scheduler/logs"), expect: authed(403, 403, 403, 200) },

    listAlertRules: { path: fixed("/api/alerts/rules"), expect: authed(403, 403, 403, 200) },
    createAlertRule: {
      path: fixed("/api/alerts/rules"),
      body: () => ({ name: unique("walk-rule"), rule_type: "node_unreachable", cluster_id: w.clusterD.id, window_s: 300, enabled: false }),
      expect: authed(403, 403, 403, 201),
    },
    updateAlertRule: { path: fixed(`/api/alerts/rules/${w.rule.id}`), body: () => ({ threshold: 85 }), expect: authed(403, 403, 403, 200) },
    listAlerts: { path: fixed("/api/alerts"), expect: authed(403, 200, 200, 200) },
    exportAlerts: { path: fixed("/api/alerts/export?status=firing"), expect: authed(403, 200, 200, 200) },
    getAlert: { path: fixed(`/api/alerts/${w.alertOfA.id}`), expect: authed(403, 404, 200, 200) },
    acknowledgeAlert: { path: fixed(`/api/alerts/${w.alertOfA.id}/acknowledge`), expect: authed(403, 403, 403, 200) },
    listNotifications: { path: fixed("/api/notifications"), expect: authed(403, 403, 403, 200) },
    exportNotifications: { path: fixed("/api/notifications/export?status=failed"), expect: authed(403, 403, 403, 200) },
    retryNotification: { path: async () => `/api/notifications/${await failedNotification(w)}/retry`, expect: authed(403, 403, 403, 200) },
    listRemediations: { path: fixed("/api/remediations"), expect: authed(403, 403, 403, 200) },

    listGpuRates: { path: fixed("/api/billing/rates"), expect: authed(403, 200, 200, 200) },
    setGpuRate: { path: fixed("/api/billing/rates/WALK"), body: () => ({ cents_per_hour: 123 }), expect: authed(403, 403, 403, 200) },
    getTenantUsage: { path: fixed(`/api/tenants/${w.a.id}/usage`), expect: authed(403, 404, 200, 200) },
    createInvoice: {
      path: async () => {
        invoiceWindow = await usageWindowOfA(w);
        return `/api/tenants/${w.a.id}/invoice`;
      },
      body: () => ({ ...invoiceWindow }),
      expect: authed(403, 403, 403, 201),
    },
    listTenantInvoices: { path: fixed(`/api/tenants/${w.a.id}/invoices`), expect: authed(403, 404, 200, 200) },
    listInvoices: { path: fixed("/api/invoices"), expect: authed(403, 403, 403, 200) },
    getInvoice: { path: fixed(`/api/invoices/${w.invoiceOfA}`), expect: authed(403, 404, 200, 200) },
    getInvoiceCsv: { path: fixed(`/api/invoices/${w.invoiceOfA}/csv`), expect: authed(403, 404, 200, 200) },
    payInvoice: {
      path: async () => `/api/invoices/${await pendingInvoiceOfA(w)}/pay`,
      body: () => ({ method: "bank", reference: "walk transfer" }),
      expect: authed(403, 404, 403, 200),
    },
    voidInvoice: { path: async () => `/api/invoices/${await pendingInvoiceOfA(w)}/void`, expect: authed(403, 403, 403, 200) },
    refundInvoice: {
      path: async () => {
        const id = await pendingInvoiceOfA(w);
        await payInvoice(systemActor, id, { method: "bank", reference: "walk" });
        return `/api/invoices/${id}/refund`;
      },
      body: () => ({ amount_cents: 1, reason: "walk credit" }),
      expect: authed(403, 403, 403, 201),
    },
    getBillingSummary: { path: fixed("/api/billing/summary"), expect: authed(403, 403, 403, 200) },
    createDeposit: {
      path: fixed(`/api/tenants/${w.a.id}/deposits`),
      body: () => ({ amount_cents: 100 }),
      expect: authed(403, 403, 403, 201),
    },
    listTenantTransactions: { path: fixed(`/api/tenants/${w.a.id}/transactions`), expect: authed(403, 404, 200, 200) },
    stripeWebhook: { path: fixed("/api/webhooks/stripe"), expect: all(400) },

    createReservation: {
      path: fixed("/api/reservations"),
      body: () => ({ gpu_type: w.reservableType, node_count: 1, tenant_id: w.a.id, ...randomWindow() }),
      expect: authed(403, 403, 201, 201),
    },
    listReservations: { path: fixed("/api/reservations"), expect: authed(403, 200, 200, 200) },
    getReservation: { path: fixed(`/api/reservations/${w.reservationOfA}`), expect: authed(403, 404, 200, 200) },
    extendReservation: {
      path: async () => `/api/reservations/${await reservationOfA(w)}`,
      body: () => ({ ends_at: new Date(lastReservationEnd + 3_600_000).toISOString() }),
      expect: authed(403, 404, 200, 200),
    },
    endReservation: { path: async () => `/api/reservations/${await reservationOfA(w)}`, expect: authed(403, 404, 200, 200) },
    listReservationEvents: { path: fixed(`/api/reservations/${w.reservationOfA}/events`), expect: authed(403, 404, 200, 200) },
    getCapacity: { path: fixed(`/api/capacity?gpu_type=${w.reservableType}`), expect: authed(403, 200, 200, 200) },

    createDemoRequest: {
      path: fixed("/api/demo-requests"),
      body: () => ({ name: "Grace Hopper", email: `${unique("g")}@example.test`, company: "Navy Labs" }),
      expect: all(201),
    },
    createEarlyAccess: { path: fixed("/api/early-access"), body: () => ({ email: `${unique("early")}@example.test` }), expect: all(201) },

    // self-service accounts: the public forms answer every caller alike (the walks' server has sign-up on)
    signUp: {
      path: fixed("/api/signup"),
      body: () => ({ email: `${unique("walk-signup")}@walk.test`, password: "walk-signup-passphrase-9", company: unique("Walk Co") }),
      expect: all(202),
    },
    verifyEmail: {
      path: fixed("/api/signup/verify"),
      body: () => ({ token: w.tokens.verify.pop() ?? "used-up", password: WALK_PASSWORD }),
      expect: all(200),
    },
    discardSignup: { path: fixed("/api/signup/discard"), body: () => ({ token: w.tokens.discard.pop() ?? "used-up" }), expect: all(200) },
    requestPasswordReset: {
      path: fixed("/api/password-reset"),
      body: () => ({ email: `${unique("walk-reset")}@walk.test` }),
      expect: all(202),
    },
    confirmPasswordReset: {
      path: fixed("/api/password-reset/confirm"),
      body: () => ({ token: w.tokens.reset.pop() ?? "used-up", password: "a walk's new passphrase 7" }),
      expect: all(200),
    },
    listUserSignIns: { path: fixed(`/api/users/${w.userOfA.id}/sign-ins`), expect: authed(403, 404, 200, 200) },
    createCardDepositCheckout: {
      path: fixed(`/api/tenants/${w.a.id}/deposits/checkout`),
      body: () => ({ amount_cents: 5000 }),
      expect: authed(403, 404, 409, 409),
      validStatus: 409,
    },
    listCardDeposits: { path: fixed(`/api/tenants/${w.a.id}/card-deposits`), expect: authed(403, 404, 200, 200) },
    recordPageView: {
      path: fixed("/api/analytics/pageview"),
      body: () => ({ path: "/use-cases/gpu-cluster-management", referrer: "https://news.example.com/a" }),
      expect: all(202),
    },
    listDemoRequests: { path: fixed("/api/demo-requests"), expect: authed(403, 403, 403, 200) },
    updateDemoRequest: {
      path: fixed(`/api/demo-requests/${w.demoRequest.id}`),
      body: () => ({ status: "contacted" }),
      expect: authed(403, 403, 403, 200),
    },
    getSiteAnalytics: { path: fixed("/api/analytics/summary"), expect: authed(403, 403, 403, 200) },

    // Handover and attestation. The node's own agent (cluster C's key, on its node) is the only caller of the
    // evidence routes; operators start handovers and keep policies; a tenant reads the verdicts of nodes it received.
    enrolAttestationIdentity: {
      path: async () => `/api/nodes/${await nodeOfC(w)}/attestation/identity`,
      body: () => ({ ...w.attestation.identity, tpm_kind: "simulated" }),
      caller: "agent",
      expect: authed(201, 403, 403, 403),
    },
    getAttestationIdentity: {
      path: async () => `/api/nodes/${await enrolledNodeOfC(w)}/attestation/identity`,
      expect: authed(403, 403, 403, 200),
    },
    reenrolAttestationIdentity: {
      path: async () => `/api/nodes/${await enrolledNodeOfC(w)}/attestation/identity`,
      expect: authed(403, 403, 403, 204),
    },
    issueAttestationNonce: {
      path: async () => `/api/nodes/${await nodeOfC(w)}/attestation/nonce`,
      caller: "agent",
      expect: authed(201, 403, 403, 403),
    },
    submitAttestationEvidence: {
      path: async () => `/api/nodes/${await nodeOfC(w)}/attestation`,
      body: () => structuredClone(w.attestation.evidence),
      caller: "agent",
      expect: authed(201, 403, 403, 403),
    },
    reportNodeWipe: {
      path: async () => `/api/nodes/${await wipingNodeOfC(w)}/wipe`,
      body: () => {
        const at = new Date().toISOString();
        return { devices: [{ device: "GPU-walk", method: "nvidia-smi -r -i 0", started_at: at, finished_at: at, result: "ok" }] };
      },
      caller: "agent",
      expect: authed(201, 403, 403, 403),
    },
    listNodeAttestations: { path: fixed(`/api/nodes/${w.attestation.receivedNodeOfA}/attestations`), expect: authed(403, 404, 200, 200) },
    startNodeHandover: {
      path: async () => `/api/nodes/${await nodeOfC(w)}/handover`,
      body: () => ({ mode: "full", reason: "walk" }),
      expect: authed(403, 403, 403, 202),
    },
    listNodeHandovers: { path: fixed(`/api/nodes/${w.nodeC.node.id}/handovers`), expect: authed(403, 403, 403, 200) },
    getClusterHandoverSettings: { path: fixed(`/api/clusters/${w.clusterD.id}/handover`), expect: authed(403, 403, 403, 200) },
    putClusterHandoverSettings: {
      path: async () => `/api/clusters/${(await makeCluster()).id}/handover`,
      body: () => ({
        wipe_command: "/usr/local/sbin/wipe",
        wipe_timeout_s: 600,
        attestation: "required",
        attestation_policy_id: w.attestation.policy.id,
        attestation_timeout_s: 300,
      }),
      expect: authed(403, 403, 403, 200),
    },
    attestationKeys: { path: fixed("/api/attestation/keys"), expect: all(200) },
    listAttestationPolicies: { path: fixed("/api/attestation/policies"), expect: authed(403, 403, 403, 200) },
    createAttestationPolicy: {
      path: fixed("/api/attestation/policies"),
      body: () => ({ name: unique("walk-policy"), ...goldenPolicyBody() }),
      expect: authed(403, 403, 403, 201),
    },
    getAttestationPolicy: { path: fixed(`/api/attestation/policies/${w.attestation.policy.id}`), expect: authed(403, 403, 403, 200) },
    updateAttestationPolicy: {
      path: fixed(`/api/attestation/policies/${w.attestation.policy.id}`),
      body: () => goldenPolicyBody(),
      expect: authed(403, 403, 403, 200),
    },

    // Prometheus and Alertmanager use tokens of their own (the operations e2e test); of API keys only an operator's
    getPrometheusMetrics: { path: fixed("/api/metrics"), expect: authed(403, 403, 403, 200) },
    alertmanagerWebhook: {
      path: fixed("/api/webhooks/alertmanager"),
      body: () => ({
        version: "4",
        groupKey: "{}:{}",
        status: "firing",
        receiver: "walk",
        groupLabels: {},
        commonLabels: {},
        commonAnnotations: {},
        externalURL: "http://alertmanager:9093",
        alerts: [
          {
            status: "firing",
            labels: { alertname: "WalkAlert" },
            annotations: {},
            startsAt: new Date().toISOString(),
            fingerprint: unique("walk"),
          },
        ],
      }),
      expect: authed(403, 403, 403, 200),
    },
  };
}

function inventoryOf(gpus: Array<{ uuid: string; index: number; gpuType: string; memoryTotalMb: number }>) {
  return gpus.map((g) => ({ uuid: g.uuid, index: g.index, gpu_type: g.gpuType, memory_total_mb: g.memoryTotalMb }));
}
