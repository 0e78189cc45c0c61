import "server-only";
import { assertOperator, type Actor, type Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { notFound, validationFailed } from "@/lib/errors";
import { createPolicy } from "./create-policy";
import { parseEventLog, replay } from "./event-log";
import type { FailureCode } from "./failures";
import { FIRMWARE_PCRS, referencePolicyFromLog, type EvidenceSection } from "./policy";
import { EVIDENCE_OF, LATEST_VERDICTS } from "./statements";
import { NODE_BY_ID } from "./node-statements";
import { CAPTURABLE_NODES } from "./capture-statements";

/**
 * Failures that say only that the node's measurements are not (yet) the policy's: evidence with no
 * other failure is genuine (signed by the node's pinned key, over a fresh nonce, its event log
 * replaying to the quoted PCRs) and may become a policy's reference values.
 */
const MEASUREMENT_ONLY = new Set<FailureCode>([
  "policy.assignment.missing",
  "policy.section.missing",
  "policy.section.invalid",
  "policy.pcr.mismatch",
  "event_log.event.unknown",
  "evidence.wipe_report.missing",
  "evidence.gpu_reports.missing",
  "wipe.report.empty",
  "wipe.device.failed",
  "gpu.report.empty",
  "gpu.driver.unexpected",
  "gpu.vbios.unexpected",
]);

/** Nodes whose latest evidence a policy could be captured from, with its verdict. */
export async function capturableNodes(p: Principal) {
  assertOperator(p);
  return run(pool(), CAPTURABLE_NODES, [50]);
}

/**
 * Captures a policy from a node an operator trusts: the reference values are what its latest
 * evidence measured (the PCRs its boot event log replays to, and every event of that log), taken
 * only from evidence that is genuine. A node never attested, or whose latest evidence failed for
 * any other reason than its measurements, cannot be the reference.
 */
export async function capturePolicyFromNode(
  actor: Actor,
  input: { node_id: string; name: string; description?: string; require: EvidenceSection[] },
) {
  assertOperator(actor.principal);
  const node = await runOne(db(), NODE_BY_ID, [input.node_id]);
  if (!node) throw notFound("Node");
  const verdict = (await run(db(), LATEST_VERDICTS, [[node.id]]))[0];
  if (!verdict)
    throw validationFailed([{ path: "node_id", message: `${node.hostname} has never been attested: there is no evidence to capture` }]);
  const failures = (verdict.failures as Array<{ code: FailureCode }>).map((f) => f.code).filter((c) => !MEASUREMENT_ONLY.has(c));
  if (failures.length)
    throw validationFailed([
      {
        path: "node_id",
        message: `${node.hostname}'s latest evidence cannot be trusted as a reference (${[...new Set(failures)].join(", ")})`,
      },
    ]);
  const evidence = await runOne(db(), EVIDENCE_OF, [verdict.id]);
  if (!evidence?.event_log)
    throw validationFailed([
      { path: "node_id", message: `${node.hostname}'s latest evidence has no boot event log to take reference values from` },
    ]);
  const log = parseEventLog(evidence.event_log);
  const quoted = (evidence.pcrs as { sha256?: Record<string, string> } | null)?.sha256 ?? {};
  const pcrs = [...new Set([...FIRMWARE_PCRS, ...Object.keys(quoted).map(Number)])].sort((a, b) => a - b);
  const replayed = replay(log);
  // PCRs beyond the firmware's that the log does not extend keep the value the TPM quoted
  for (const p of pcrs) if (!replayed.has(p) && quoted[String(p)] && p > 7) replayed.set(p, Buffer.from(quoted[String(p)]!, "hex"));
  // the GPUs' driver and VBIOS versions, as the node reported them
  let gpu: { driver_versions: string[]; vbios_versions?: string[] } | undefined;
  if (input.require.includes("gpu_reports")) {
    const reports = (Array.isArray(evidence.gpu_reports) ? evidence.gpu_reports : []) as Array<{
      driver_version?: string;
      vbios_version?: string;
    }>;
    const drivers = [...new Set(reports.map((r) => r.driver_version).filter((v): v is string => Boolean(v)))];
    const vbios = [...new Set(reports.map((r) => r.vbios_version).filter((v): v is string => Boolean(v)))];
    if (drivers.length === 0)
      throw validationFailed([{ path: "require", message: `${node.hostname}'s evidence has no GPU reports to take versions from` }]);
    gpu = { driver_versions: drivers, ...(vbios.length && reports.every((r) => r.vbios_version) ? { vbios_versions: vbios } : {}) };
  }
  const body = referencePolicyFromLog(log, replayed, { pcrs, require: input.require, ...(gpu ? { gpu } : {}) });
  return createPolicy(actor, {
    name: input.name,
    description: input.description ?? `Captured from ${node.hostname}'s attestation of ${verdict.created_at.toISOString()}`,
    ...body,
  });
}
