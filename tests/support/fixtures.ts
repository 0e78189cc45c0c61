import { randomUUID } from "node:crypto";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor, type Actor, type AgentPrincipal, type Principal } from "@/lib/auth/principal";
import { createCluster } from "@/lib/fleet/create-cluster";
import { markOfflineNodes } from "@/lib/fleet/mark-offline-nodes";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { db } from "@/lib/db/client";
import { createTenant } from "@/lib/tenants/create-tenant";
import { createUser } from "@/lib/users/create-user";

// Each test builds its own world with unique names, so test files can run in parallel
// against the same database without seeing each other.

export const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

export function actorFor(principal: Principal): Actor {
  return { principal, requestId: randomUUID() };
}

export async function makeTenant(gpuQuota = 16) {
  return createTenant(systemActor, { name: unique("tenant"), gpu_quota: gpuQuota, billing_email: null });
}

export async function makeCluster() {
  return createCluster(systemActor, { name: unique("cluster"), region: "test-1", provider: "test" });
}

export async function makeUser(role: "operator" | "tenant_admin" | "tenant_member", tenantId?: string, password = "a-long-test-password") {
  const email = `${unique(role)}@example.test`;
  const user = await createUser(systemActor, { email, name: role, password, role, tenant_id: tenantId });
  return { ...user, password };
}

export function tenantAdminPrincipal(tenantId: string, userId?: string): Principal {
  return { kind: "tenant", tenantId, role: "tenant_admin", userId, label: "test admin" };
}

export function tenantMemberPrincipal(tenantId: string, userId?: string): Principal {
  return { kind: "tenant", tenantId, role: "tenant_member", userId, label: "test member" };
}

export async function makeKey(input: {
  scope: "operator" | "tenant" | "agent";
  tenant_id?: string;
  cluster_id?: string;
  node_id?: string;
}) {
  return createApiKey(systemActor, { name: unique("key"), ...input });
}

export function agentPrincipal(clusterId: string, nodeId?: string): AgentPrincipal {
  return { kind: "agent", clusterId, ...(nodeId ? { nodeId } : {}), keyId: "00000000-0000-4000-8000-00000000a9e7", label: "test agent" };
}

export const operatorPrincipal: Principal = { kind: "operator", label: "test operator" };

/** What a tenant's admin does through the services (the actor of a tenant_admin principal). */
export const asTenantAdmin = (tenantId: string) => actorFor(tenantAdminPrincipal(tenantId));

export function inventory(count = 8, gpuType = "H100", prefix = unique("GPU")) {
  return Array.from({ length: count }, (_, i) => ({
    uuid: `${prefix}-${i}`,
    index: i,
    gpu_type: gpuType,
    model: `NVIDIA ${gpuType}`,
    memory_total_mb: 81_559,
  }));
}

/**
 * A cluster of available nodes (registered, first heartbeat seen, running containers) with GPUs of
 * a type unique to the caller, so tests running in parallel never compete for the same GPUs.
 */
export async function availableFleet(nodes: number, gpusPerNode = 8, typePrefix = "T") {
  const cluster = await makeCluster();
  const gpuType = unique(typePrefix).replace(/-/g, "").slice(0, 12).toUpperCase();
  const agent = actorFor(agentPrincipal(cluster.id));
  const out = [];
  for (let i = 0; i < nodes; i++) {
    const r = await registerNode(agent, {
      hostname: unique("n"),
      capabilities: { containers: true, runtime: "docker test" },
      gpus: inventory(gpusPerNode, gpuType),
    });
    await recordHeartbeat(agent, r.node.id, {});
    out.push(r);
  }
  return { cluster, gpuType, nodes: out };
}

/** A cluster of freshly registered nodes (no heartbeat yet) of eight GPUs each. */
export async function registeredFleet(nodes: number) {
  const cluster = await makeCluster();
  const out = [];
  for (let i = 0; i < nodes; i++)
    out.push(await registerNode(actorFor(agentPrincipal(cluster.id)), { hostname: unique("n"), gpus: inventory(8) }));
  return { cluster, nodes: out, gpus: out.flatMap((n) => n.gpus) };
}

/** The placement an agent reports on: the job's current attempt and fence, as its heartbeat assignment carries them. */
export async function placementOf(jobId: string): Promise<{ attempt: number; fence: string }> {
  const j = await db().job.findUniqueOrThrow({ where: { id: jobId }, select: { attempts: true, fence: true } });
  if (!j.fence) throw new Error(`job ${jobId} has never been placed`);
  return { attempt: j.attempts, fence: j.fence };
}

/**
 * Runs the offline sweep until the node (silent past the threshold) is offline. The sweep is
 * fleet-wide and skips rows another transaction holds: another test file's sweep may hold this
 * node and mark it a moment later, so one call returning is not the node being offline yet.
 */
export async function sweepUntilOffline(nodeId: string, afterSeconds = 300): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await markOfflineNodes(afterSeconds);
    const node = await db().node.findUniqueOrThrow({ where: { id: nodeId }, select: { status: true } });
    if (node.status === "offline") return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`node ${nodeId} did not go offline`);
}

/**
 * A node that really is unreachable (offline for ten minutes, in a cluster of its own) with `count`
 * alerts of one enabled node_unreachable rule about it, the last firing. The rule and its history are
 * written in one transaction, so an evaluation of every rule (another file's, or the app's background
 * one) sees neither or both, and keeps the latest firing instead of resolving it mid-test.
 */
export async function unreachableNodeAlerts(count: number, opts: { subject: string; ruleName: string; notify: boolean }) {
  const cluster = await makeCluster();
  const subject = opts.subject;
  const node = await db().node.create({
    data: {
      clusterId: cluster.id,
      hostname: subject,
      status: "offline",
      statusBeforeOffline: "available",
      lastHeartbeatAt: new Date(Date.now() - 600_000),
    },
  });
  const rule = await db().$transaction(async (tx) => {
    const rule = await tx.alertRule.create({
      data: {
        name: opts.ruleName,
        ruleType: "node_unreachable",
        clusterId: cluster.id,
        windowS: 120,
        severity: "critical",
        enabled: true,
        notify: opts.notify,
        autoRemediate: false,
      },
    });
    for (let i = 0; i < count; i++) {
      const firing = i === count - 1;
      await tx.alertEvent.create({
        data: {
          ruleId: rule.id,
          ruleType: "node_unreachable",
          // the firing one under the key the evaluator gives it, so its evaluation refreshes this event
          dedupeKey: firing ? `${rule.id}:node:${node.id}` : `${rule.id}:node:${node.id}:${i}`,
          subjectType: "node",
          subjectId: node.id,
          subjectLabel: subject,
          clusterId: cluster.id,
          nodeId: node.id,
          severity: "critical",
          message: `${subject} has sent no heartbeat`,
          status: firing ? "firing" : "resolved",
          resolvedAt: firing ? null : new Date(),
          firedAt: new Date(Date.now() - (count - i) * 60_000),
        },
      });
    }
    return rule;
  });
  return { cluster, node, rule, subject };
}
