import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { run, runOne, type Runner } from "@/lib/db/statement";
import {
  ACQUIRE_NODE_LEASE,
  CURRENT_NODE_LEASE,
  FENCE_NODE_LEASE,
  RELEASE_NODE_LEASE,
  RENEW_NODE_LEASE,
  REVOKE_NODE_LEASE,
} from "./lease-statements";

// Worker leases on nodes, with fencing tokens.
//
// Background steps that act on a node over time (a handover's release, wipe and attestation; a
// provisioning's Redfish calls) hold the node's lease while they run. A lease is one row per node
// (node_leases): who holds it, for what purpose and workflow, until when, and its fencing token, a
// number that grows by one with every acquisition and never goes back.
//
//   acquireNodeLease   takes the lease when nobody holds it live (never taken, released, revoked or
//                      expired): a new token, one above the last. Answers null while a live lease is
//                      held by anyone, the caller included: concurrent acquirers get one winner.
//   renewNodeLease     the holder extends its lease before it expires (null: it was lost; stop).
//   releaseNodeLease   the holder gives it back when its step is done.
//   revokeNodeLease    an operator stopped the workflow: the token moves on, the holder's writes fail.
//   take-over          a worker that stalls past its lease loses it: once expired, the next
//                      acquireNodeLease (another worker, or the same one restarted) gets it with a
//                      new token and continues the workflow from its recorded steps.
//
// Fencing. Every write a lease holder makes carries its token, and the database refuses the write,
// inside the same statement, unless that token is the node's live lease: a statement either calls
// node_lease_fence(node, token) (`fence` of lib/fleet/lease-fence.ts writes the condition) or writes a row with `lease_token` beside
// `node_id` into a table fenced by the node_lease_fenced_write() trigger (node_workflows,
// node_workflow_steps, node_events; any new table with those two columns can attach the same
// trigger). The fence locks the lease row FOR SHARE until the writing transaction ends, so a
// take-over or revocation waits for the writes already checked, and no write under an old token
// lands after the new holder's first. A refused write raises SQLSTATE GF001 (`isStaleLease`);
// the worker then stops, because someone else now owns the node's workflow.
//
// Typical use in a step (lib/fleet/node-workflows.ts records steps and node state changes):
//
//   const lease = await acquireNodeLease(pool(), { nodeId, purpose: "provisioning", workflowId, holder: workerId(), ttlMs: 60_000 });
//   if (!lease) return;                          // someone else runs this node's workflow
//   const step = await beginWorkflowStep(pool(), lease, { name: "power_off" });
//   ... the step's work, renewing the lease when it takes long ...
//   await finishWorkflowStep(pool(), lease, step, { status: "succeeded", details });
//   await releaseNodeLease(pool(), lease);
//
// Times are the database's clock at each call (clock_timestamp()), never a worker's: workers on
// different machines agree on expiry because only one clock decides it.

export const LEASE_PURPOSES = ["handover", "provisioning"] as const;
type LeasePurpose = (typeof LEASE_PURPOSES)[number];

/** SQLSTATE of a write refused by the fence (raised by node_lease_fence). */
export const STALE_LEASE_SQLSTATE = "GF001";

/** A lease a worker holds. `token` is a decimal string (PostgreSQL bigint, exact). */
export interface NodeLease {
  nodeId: string;
  purpose: LeasePurpose;
  workflowId: string | null;
  holder: string;
  token: string;
  expiresAt: Date;
}

export interface AcquireLease {
  nodeId: string;
  purpose: LeasePurpose;
  workflowId?: string | null;
  /** the worker's own id: workerId() for this process, plus anything that tells its runs apart */
  holder: string;
  /** how long the lease lasts unless renewed (at least a second) */
  ttlMs: number;
}

const PROCESS_ID = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/** This process's worker id, unique across restarts and machines. */
export function workerId(suffix?: string): string {
  return suffix ? `${PROCESS_ID}:${suffix}` : PROCESS_ID;
}

function ttl(ms: number): number {
  if (!Number.isInteger(ms) || ms < 1_000 || ms > 86_400_000) throw new RangeError(`lease ttl must be 1 s to 1 day in ms, not ${ms}`);
  return ms;
}

/** Takes the node's lease when nobody holds it live; null when somebody does (the caller too). */
export async function acquireNodeLease(client: Runner, req: AcquireLease): Promise<NodeLease | null> {
  const row = await runOne(client, ACQUIRE_NODE_LEASE, [req.nodeId, req.purpose, req.workflowId ?? null, req.holder, ttl(req.ttlMs)]);
  if (!row) return null;
  return {
    nodeId: req.nodeId,
    purpose: req.purpose,
    workflowId: req.workflowId ?? null,
    holder: req.holder,
    token: row.token,
    expiresAt: row.expires_at,
  };
}

/** Extends a lease the worker still holds; null when it was lost (expired and taken, released, revoked). */
export async function renewNodeLease(client: Runner, lease: NodeLease, ttlMs: number): Promise<NodeLease | null> {
  const row = await runOne(client, RENEW_NODE_LEASE, [lease.nodeId, lease.token, ttl(ttlMs)]);
  return row ? { ...lease, expiresAt: row.expires_at } : null;
}

/** Gives the lease back; false when it was no longer this worker's. */
export async function releaseNodeLease(client: Runner, lease: NodeLease): Promise<boolean> {
  return (await runOne(client, RELEASE_NODE_LEASE, [lease.nodeId, lease.token]))?.released === true;
}

/** Takes the lease from whoever holds it (an operator stopped the workflow); the new token, or null when the node never had one. */
export async function revokeNodeLease(client: Runner, nodeId: string): Promise<string | null> {
  return (await runOne(client, REVOKE_NODE_LEASE, [nodeId]))?.token ?? null;
}

/** Checks, and holds until the transaction ends, that the lease is still the node's live one (raises GF001 otherwise). */
export async function assertNodeLease(client: Runner, lease: NodeLease): Promise<void> {
  await run(client, FENCE_NODE_LEASE, [lease.nodeId, lease.token]);
}

/** The node's lease row as it stands (for pages and the workflow runner), whether live or not. */
export async function currentNodeLease(client: Runner, nodeId: string) {
  return (await runOne(client, CURRENT_NODE_LEASE, [nodeId])) ?? null;
}

/** Whether an error is the database refusing a write under a lease that is no longer live. */
export function isStaleLease(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; typeof x === "object" && x !== null && depth < 6; depth++) {
    const err = x as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } };
    };
    if (err.code === STALE_LEASE_SQLSTATE || err.meta?.driverAdapterError?.cause?.originalCode === STALE_LEASE_SQLSTATE) return true;
    if (typeof err.message === "string" && err.message.includes("stale lease:")) return true;
    x = err.cause ?? err.meta?.driverAdapterError?.cause;
  }
  return false;
}
