import "server-only";
import { randomUUID } from "node:crypto";
import { run, runOne, type RowOf, type Runner } from "@/lib/db/statement";
import type { Failure } from "./failures";
import type { SigningKey } from "./verdict-jws";
import { signJws } from "./verdict-jws";
import { INSERT_ATTESTATION, INSERT_EVIDENCE } from "./statements";

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

export type VerdictRow = RowOf<typeof INSERT_ATTESTATION>;

export interface VerdictFacts {
  nodeId: string;
  workflowId: string | null;
  nonce: string | null;
  failures: Failure[];
  policy: { id: string; name: string; version: number } | null;
  pcrDigest: string | null;
  pcrs: Record<string, string>;
  tpmKind: string | null;
  akQualifiedName: string | null;
  /** the database's clock when it was judged */
  at: Date;
}

/** What a verdict's JWS says: API.md's fields, and what a tenant needs to check it on its own. */
function verdictPayload(id: string, f: VerdictFacts, createdAt: string) {
  return {
    iss: "gpuforge",
    jti: id,
    node_id: f.nodeId,
    nonce: f.nonce,
    result: f.failures.length === 0 ? ("pass" as const) : ("fail" as const),
    failures: f.failures,
    policy: f.policy?.name ?? null,
    policy_version: f.policy?.version ?? null,
    pcr_digest: f.pcrDigest,
    pcrs: { sha256: f.pcrs },
    tpm_kind: f.tpmKind,
    ak_qualified_name: f.akQualifiedName,
    workflow_id: f.workflowId,
    created_at: createdAt,
  };
}

/** Signs a verdict and stores it with the evidence it judged, inside the caller's transaction (append-only). */
export async function recordVerdict(
  client: Runner,
  key: SigningKey,
  f: VerdictFacts,
  evidence?: {
    quote: Buffer | null;
    signature: Buffer | null;
    pcrs: unknown;
    eventLog: Buffer | null;
    wipeReport: unknown;
    gpuReports: unknown;
  },
): Promise<VerdictRow> {
  const id = randomUUID();
  const createdAt = new Date(Math.floor(f.at.getTime())).toISOString();
  const payload = verdictPayload(id, f, createdAt);
  const jws = signJws(payload, key);
  const row = (await runOne(client, INSERT_ATTESTATION, [
    id,
    f.nodeId,
    f.workflowId,
    f.nonce,
    payload.result,
    JSON.stringify(f.failures),
    f.policy?.id ?? null,
    f.policy?.name ?? null,
    f.policy?.version ?? null,
    f.pcrDigest,
    f.tpmKind,
    key.kid,
    jws,
    createdAt,
  ]))!;
  if (evidence)
    await run(client, INSERT_EVIDENCE, [
      id,
      f.nodeId,
      evidence.quote,
      evidence.signature,
      json(evidence.pcrs),
      evidence.eventLog,
      json(evidence.wipeReport),
      json(evidence.gpuReports),
    ]);
  return row;
}
