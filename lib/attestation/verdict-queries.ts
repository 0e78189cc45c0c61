import "server-only";
import type { z } from "zod";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { run, runOne, type RowOf, type Runner } from "@/lib/db/statement";
import { forbidden, notFound } from "@/lib/errors";
import { decodeCursor, encodeCursor } from "@/lib/http/pagination";
import { isOneOf, oneOf } from "@/lib/vocabulary";
import { NODE_BY_ID } from "./node-statements";
import { TPM_KINDS, VERDICT_RESULTS, type attestationJsonSchema, type failureJsonSchema } from "./schemas";
import { LATEST_VERDICTS, TENANT_RECEIVED_NODE, VERDICTS_OF_NODE } from "./statements";

type VerdictRow = RowOf<typeof VERDICTS_OF_NODE>;
export type AttestationJson = z.infer<typeof attestationJsonSchema>;

/** A stored verdict as the API answers it. */
export function attestationJson(r: VerdictRow): AttestationJson {
  return {
    id: r.id,
    node_id: r.node_id,
    workflow_id: r.workflow_id,
    result: oneOf(VERDICT_RESULTS, r.result, "attestations.result"),
    failures: (Array.isArray(r.failures) ? r.failures : []) as Array<z.infer<typeof failureJsonSchema>>,
    policy: r.policy_name,
    policy_version: r.policy_version,
    pcr_digest: r.pcr_digest,
    tpm_kind: isOneOf(TPM_KINDS, r.tpm_kind) ? r.tpm_kind : null,
    kid: r.kid,
    created_at: r.created_at.toISOString(),
    jws: r.jws,
  };
}

/**
 * Who may read a node's verdicts: operators, and a tenant that received the node (one of its
 * reservations held it, now or before). Anyone else is told the node does not exist.
 */
async function assertMayRead(client: Runner, p: Principal, nodeId: string): Promise<void> {
  if (p.kind === "operator") {
    if (!(await runOne(client, NODE_BY_ID, [nodeId]))) throw notFound("Node");
    return;
  }
  if (p.kind !== "tenant") throw forbidden("Verdicts are for operators and the tenants that received the node");
  const row = await runOne(client, TENANT_RECEIVED_NODE, [nodeId, p.tenantId]);
  if (!row?.received) throw notFound("Node");
}

/** GET /api/nodes/{id}/attestations: the node's verdicts, newest first. */
export async function listNodeAttestations(p: Principal, nodeId: string, q: { limit: number; cursor?: string }) {
  const client = db();
  await assertMayRead(client, p, nodeId);
  const c = decodeCursor(q.cursor);
  const rows = await run(client, VERDICTS_OF_NODE, [nodeId, q.limit, c?.createdAt ?? null, c?.id ?? null]);
  const data = rows.slice(0, q.limit).map(attestationJson);
  const last = rows.length > q.limit ? rows[q.limit - 1] : undefined;
  return { data, nextCursor: last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null };
}

/** The latest verdict of each node given (for pages that show many nodes). */
export async function latestVerdicts(client: Runner, nodeIds: string[]): Promise<Map<string, AttestationJson>> {
  if (nodeIds.length === 0) return new Map();
  const rows = await run(client, LATEST_VERDICTS, [nodeIds]);
  return new Map(rows.map((r) => [r.node_id, attestationJson(r)]));
}
