import { createHash, createPublicKey, constants, verify, type KeyObject } from "node:crypto";
import { eventsWithoutBank, eventTypeName, EV_NO_ACTION, initialPcr, parseEventLog, replay, type EventLog } from "./event-log";
import { failure, type Failure } from "./failures";
import { compilePolicy, FIRMWARE_PCRS, type CompiledPolicy, type StoredPolicy } from "./policy";
import {
  DIGEST_SIZE,
  HASH_NAME,
  parseAttest,
  parseSignature,
  StructureError,
  TPM_ALG,
  TPM_ALG_ECDSA,
  TPM_ALG_RSAPSS,
  TPM_ALG_RSASSA,
  TPM_GENERATED_VALUE,
  TPM_ST_ATTEST_QUOTE,
  type QuoteAttest,
  type TpmSignature,
} from "./tpm-structures";

// The attestation verifier. Pure (no I/O, no clock of its own): it is given the evidence a node
// sent, the state of the nonce it answers, the node's enrolled attestation key and the policy it
// is checked against, and answers a verdict with every failure it found. It fails closed: anything
// missing, unknown or malformed is a named failure, and checks go on after a failure so the
// verdict lists them all (a later check that cannot run without an earlier result is skipped, not
// passed). Failure ids: lib/attestation/failures.ts.

// Parsed attestation keys by PEM: reading a PEM costs about as much as checking the signature, and
// a verifier judges the same nodes' keys again and again. Bounded; a PEM that does not parse is
// not kept (it throws, and is reported as identity.ak.invalid each time).
const AK_CACHE_MAX = 4096;
const akCache = new Map<string, KeyObject>();
function akKey(pem: string): KeyObject {
  const hit = akCache.get(pem);
  if (hit) return hit;
  const key = createPublicKey(pem);
  if (akCache.size >= AK_CACHE_MAX) akCache.delete(akCache.keys().next().value!);
  akCache.set(pem, key);
  return key;
}

interface WipeDeviceReport {
  device: string;
  method: string;
  result: "ok" | "failed";
  message?: string;
}

interface GpuReport {
  uuid: string;
  driver_version: string;
  vbios_version?: string;
}

export interface Evidence {
  /** TPMS_ATTEST bytes, as tpm2_quote -m writes them */
  quote: Buffer | null;
  /** TPMT_SIGNATURE bytes, as tpm2_quote -s writes them */
  signature: Buffer | null;
  /** PCR values by bank and index: {sha256: {"0": hex, …}} */
  pcrs: Record<string, Record<string, string>> | null;
  /** the TCG PC Client crypto-agile boot event log */
  eventLog: Buffer | null;
  wipeReport: WipeDeviceReport[] | null;
  gpuReports: GpuReport[] | null;
}

/** The nonce the evidence names, as the database had it before this submission used it. */
interface NonceRecord {
  nodeId: string;
  expiresAt: Date;
  /** when it was used before (null: this submission is its first use) */
  usedAt: Date | null;
}

export interface VerifyInput {
  nodeId: string;
  /** the nonce the agent says it quoted over, hex */
  nonce: string;
  nonceRecord: NonceRecord | null;
  /** the node's pinned attestation key: its public part, and its qualified name when it was enrolled with one */
  identity: { akPublicPem: string; akQualifiedName: string | null } | null;
  /** the policy as stored (compiled here), or already compiled, or none */
  policy: StoredPolicy | CompiledPolicy | null;
  evidence: Evidence;
  now: Date;
}

export interface Verification {
  result: "pass" | "fail";
  failures: Failure[];
  /** the quote's PCR digest, hex (null when there is no readable quote) */
  pcrDigest: string | null;
  /** the quoted PCR values of the policy's bank */
  pcrs: Record<string, string>;
  /** how many events the log held */
  events: number;
  policy: { id: string; name: string; version: number } | null;
}

/** At most this many unknown events are listed one by one; the rest are counted in one failure. */
const MAX_LISTED_EVENTS = 32;

const isCompiled = (p: StoredPolicy | CompiledPolicy): p is CompiledPolicy => p instanceof Object && "pcrs" in p && p.pcrs instanceof Map;

export function verifyEvidence(input: VerifyInput): Verification {
  const failures: Failure[] = [];
  const ev = input.evidence;

  // 1. the nonce: issued to this node, not expired, used once
  const n = input.nonceRecord;
  if (!n || n.nodeId !== input.nodeId)
    failures.push(failure("nonce.value.unknown", `Nonce ${short(input.nonce)} was not issued to this node`));
  else {
    if (n.usedAt) failures.push(failure("nonce.value.reused", `Nonce ${short(input.nonce)} was already used at ${n.usedAt.toISOString()}`));
    if (n.expiresAt.getTime() <= input.now.getTime())
      failures.push(failure("nonce.value.expired", `Nonce ${short(input.nonce)} expired at ${n.expiresAt.toISOString()}`));
  }

  // 2. the enrolled key
  let ak: KeyObject | null = null;
  if (!input.identity)
    failures.push(failure("identity.ak.missing", "The node has no enrolled attestation key; nothing it signs can be checked"));
  else {
    try {
      ak = akKey(input.identity.akPublicPem);
    } catch (e) {
      failures.push(failure("identity.ak.invalid", `The enrolled attestation key cannot be read: ${(e as Error).message}`));
    }
  }

  // 3. the policy
  let policy: CompiledPolicy | null = null;
  if (!input.policy)
    failures.push(failure("policy.assignment.missing", "No attestation policy applies to this node (its cluster names none)"));
  else if (isCompiled(input.policy)) policy = input.policy;
  else {
    const c = compilePolicy(input.policy);
    if (c.ok) policy = c.policy;
    else failures.push(...c.failures);
  }

  // 4. what the evidence must hold
  if (!ev.quote) failures.push(failure("evidence.quote.missing", "The evidence has no quote (tpm.quote)"));
  if (!ev.signature) failures.push(failure("evidence.signature.missing", "The evidence has no quote signature (tpm.signature)"));
  if (!ev.pcrs) failures.push(failure("evidence.pcrs.missing", "The evidence has no PCR values (tpm.pcrs)"));
  if (policy?.require.has("event_log") && !ev.eventLog)
    failures.push(failure("evidence.event_log.missing", `Policy ${policy.name} requires the boot event log`));
  if (policy?.require.has("wipe_report") && !ev.wipeReport)
    failures.push(failure("evidence.wipe_report.missing", `Policy ${policy.name} requires the wipe report`));
  if (policy?.require.has("gpu_reports") && !ev.gpuReports)
    failures.push(failure("evidence.gpu_reports.missing", `Policy ${policy.name} requires GPU reports`));

  // 5. the quote itself
  let attest: QuoteAttest | null = null;
  if (ev.quote) {
    try {
      attest = parseAttest(ev.quote);
    } catch (e) {
      failures.push(failure("quote.structure.malformed", `The quote is not a TPMS_ATTEST: ${(e as Error).message}`));
    }
  }
  if (attest) {
    if (attest.magic !== TPM_GENERATED_VALUE)
      failures.push(
        failure("quote.magic.invalid", `The quote's magic is 0x${attest.magic.toString(16)}, not TPM_GENERATED_VALUE (0xff544347)`),
      );
    if (attest.type !== TPM_ST_ATTEST_QUOTE)
      failures.push(
        failure("quote.type.invalid", `The attestation's type is 0x${attest.type.toString(16)}, not TPM_ST_ATTEST_QUOTE (0x8018)`),
      );
    const expected = /^[0-9a-f]*$/i.test(input.nonce) && input.nonce.length % 2 === 0 ? input.nonce.toLowerCase() : "";
    if (attest.extraData.toString("hex") !== expected)
      failures.push(
        failure(
          "quote.nonce.mismatch",
          `The quote was made over ${short(attest.extraData.toString("hex"))}, not the nonce ${short(input.nonce)}`,
          {
            expected: input.nonce,
            actual: attest.extraData.toString("hex"),
          },
        ),
      );
    if (input.identity?.akQualifiedName && attest.qualifiedSigner.toString("hex") !== input.identity.akQualifiedName.toLowerCase())
      failures.push(
        failure("quote.signer.mismatch", "The quote names another signing key than the node's enrolled attestation key", {
          expected: input.identity.akQualifiedName.toLowerCase(),
          actual: attest.qualifiedSigner.toString("hex"),
        }),
      );
  }

  // 6. the signature over the quote, with the pinned key
  let sig: TpmSignature | null = null;
  if (ev.signature) {
    try {
      sig = parseSignature(ev.signature);
    } catch (e) {
      failures.push(failure("quote.signature.malformed", `The signature is not a TPMT_SIGNATURE: ${(e as Error).message}`));
    }
  }
  if (sig && ev.quote && ak) {
    const problem = checkSignature(ev.quote, sig, ak);
    if (problem) failures.push(problem);
  }

  // 7. the PCR values: of the quoted selection, and exactly what the quote's digest covers
  const bank = policy?.bank ?? "sha256";
  const size = DIGEST_SIZE[TPM_ALG[bank]]!;
  const quoted = new Map<number, Buffer>();
  const values: Record<string, string> = {};
  if (ev.pcrs) {
    for (const b of Object.keys(ev.pcrs))
      if (b !== bank) failures.push(failure("pcrs.bank.unknown", `PCR values of the ${b} bank were sent; the policy uses ${bank}`));
    for (const [k, v] of Object.entries(ev.pcrs[bank] ?? {})) {
      const pcr = /^(?:[0-9]|1[0-9]|2[0-3])$/.test(k) ? Number(k) : NaN;
      const hex = typeof v === "string" ? v.replace(/^0x/i, "").toLowerCase() : "";
      if (Number.isNaN(pcr) || !/^[0-9a-f]*$/.test(hex) || hex.length !== size * 2) {
        failures.push(failure("pcrs.value.malformed", `PCR ${k} of ${bank}: not a ${size}-byte digest`));
        continue;
      }
      quoted.set(pcr, Buffer.from(hex, "hex"));
      values[String(pcr)] = hex;
    }
  }
  let selection: number[] = [];
  if (attest && attest.type === TPM_ST_ATTEST_QUOTE) {
    for (const s of attest.pcrSelect) {
      if (s.hashAlg !== TPM_ALG[bank]) {
        failures.push(
          failure(
            "quote.pcr_bank.unknown",
            `The quote selects PCRs of the ${HASH_NAME[s.hashAlg] ?? `0x${s.hashAlg.toString(16)}`} bank; the policy uses ${bank}`,
          ),
        );
        continue;
      }
      selection = [...new Set([...selection, ...s.pcrs])].sort((a, b) => a - b);
    }
    for (const p of policy?.pcrs.keys() ?? [])
      if (!selection.includes(p))
        failures.push(
          failure("quote.pcr.unselected", `The quote does not cover PCR ${p}, which policy ${policy!.name} checks`, { pcr: p }),
        );
    if (ev.pcrs) {
      for (const p of selection)
        if (!quoted.has(p)) failures.push(failure("pcrs.value.missing", `PCR ${p} is quoted but its value was not sent`, { pcr: p }));
      for (const p of quoted.keys())
        if (!selection.includes(p))
          failures.push(failure("pcrs.value.unquoted", `PCR ${p} was sent but the quote does not cover it`, { pcr: p }));
      // 8. the digest the TPM signed is the digest of the values sent
      if (selection.every((p) => quoted.has(p))) {
        const hash = sig && HASH_NAME[sig.hashAlg] ? HASH_NAME[sig.hashAlg]! : bank;
        const digest = createHash(hash)
          .update(Buffer.concat(selection.map((p) => quoted.get(p)!)))
          .digest();
        if (!digest.equals(attest.pcrDigest))
          failures.push(
            failure(
              "quote.pcr_digest.mismatch",
              "The PCR values sent are not those the TPM quoted (their digest differs from the quote's)",
              {
                expected: attest.pcrDigest.toString("hex"),
                actual: digest.toString("hex"),
              },
            ),
          );
      }
    }
  }

  // 9. the operator's reference values
  if (policy)
    for (const [p, want] of policy.pcrs) {
      const got = quoted.get(p);
      if (got && got.toString("hex") !== want)
        failures.push(
          failure(
            "policy.pcr.mismatch",
            `PCR ${p} is ${short(got.toString("hex"))}, policy ${policy.name} v${policy.version} expects ${short(want)}`,
            { pcr: p, expected: want, actual: got.toString("hex") },
          ),
        );
    }

  // 10. the boot event log: replayed against the quoted PCRs, every measured event known to the policy
  let log: EventLog | null = null;
  if (ev.eventLog) {
    try {
      log = parseEventLog(ev.eventLog);
    } catch (e) {
      failures.push(
        failure("event_log.structure.malformed", `The event log cannot be read: ${e instanceof StructureError ? e.message : String(e)}`),
      );
    }
  }
  if (log) failures.push(...checkEventLog(log, bank, quoted, selection, policy));

  // 11. what the agent reports about the wipe and the GPUs
  if (ev.wipeReport) {
    if (ev.wipeReport.length === 0) failures.push(failure("wipe.report.empty", "The wipe report lists no device"));
    for (const d of ev.wipeReport)
      if (d.result !== "ok")
        failures.push(
          failure("wipe.device.failed", `${d.device} was not wiped (${d.method}${d.message ? `: ${d.message}` : ""})`, {
            device: d.device,
          }),
        );
  }
  if (policy?.gpu && ev.gpuReports) {
    if (ev.gpuReports.length === 0) failures.push(failure("gpu.report.empty", "The GPU reports list no GPU"));
    for (const g of ev.gpuReports) {
      if (!policy.gpu.driver.has(g.driver_version))
        failures.push(
          failure("gpu.driver.unexpected", `GPU ${g.uuid} runs driver ${g.driver_version}, which policy ${policy.name} does not allow`, {
            device: g.uuid,
            actual: g.driver_version,
          }),
        );
      if (policy.gpu.vbios && !(g.vbios_version && policy.gpu.vbios.has(g.vbios_version)))
        failures.push(
          failure(
            "gpu.vbios.unexpected",
            `GPU ${g.uuid} runs VBIOS ${g.vbios_version ?? "(not reported)"}, which policy ${policy.name} does not allow`,
            { device: g.uuid, actual: g.vbios_version ?? "" },
          ),
        );
    }
  }

  return {
    result: failures.length === 0 ? "pass" : "fail",
    failures,
    pcrDigest: attest && attest.type === TPM_ST_ATTEST_QUOTE ? attest.pcrDigest.toString("hex") : null,
    pcrs: values,
    events: log?.events.length ?? 0,
    policy: policy ? { id: policy.id, name: policy.name, version: policy.version } : null,
  };
}

function checkSignature(quote: Buffer, sig: TpmSignature, key: KeyObject): Failure | null {
  const hash = HASH_NAME[sig.hashAlg];
  if ("unsupported" in sig || !hash || hash === "sha1" || hash === "sm3_256")
    return failure(
      "quote.signature.unsupported",
      `Signature scheme 0x${sig.sigAlg.toString(16)} with hash 0x${sig.hashAlg.toString(16)} is not verified (ECDSA, RSASSA or RSAPSS with SHA-256/384/512 are)`,
    );
  try {
    let ok: boolean;
    if (sig.sigAlg === TPM_ALG_ECDSA) {
      if (key.asymmetricKeyType !== "ec")
        return failure("quote.signature.invalid", "An ECDSA signature, but the enrolled key is not an EC key");
      const bytes =
        ({ prime256v1: 32, secp384r1: 48, secp521r1: 66 } as Record<string, number>)[key.asymmetricKeyDetails?.namedCurve ?? ""] ?? 32;
      const pad = (b: Buffer) => (b.length > bytes ? null : Buffer.concat([Buffer.alloc(bytes - b.length), b]));
      const r = pad(sig.r);
      const s = pad(sig.s);
      ok = r !== null && s !== null && verify(hash, quote, { key, dsaEncoding: "ieee-p1363" }, Buffer.concat([r, s]));
    } else if (sig.sigAlg === TPM_ALG_RSASSA || sig.sigAlg === TPM_ALG_RSAPSS) {
      if (key.asymmetricKeyType !== "rsa")
        return failure("quote.signature.invalid", "An RSA signature, but the enrolled key is not an RSA key");
      ok = verify(
        hash,
        quote,
        sig.sigAlg === TPM_ALG_RSASSA
          ? { key, padding: constants.RSA_PKCS1_PADDING }
          : { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO },
        sig.sig,
      );
    } else ok = false;
    return ok ? null : failure("quote.signature.invalid", "The quote's signature does not verify with the node's enrolled attestation key");
  } catch (e) {
    return failure("quote.signature.invalid", `The quote's signature cannot be verified: ${(e as Error).message}`);
  }
}

function checkEventLog(
  log: EventLog,
  bank: "sha256",
  quoted: Map<number, Buffer>,
  selection: number[],
  policy: CompiledPolicy | null,
): Failure[] {
  const out: Failure[] = [];
  if (!log.banks.some((b) => b.name === bank)) {
    out.push(
      failure(
        "event_log.bank.unknown",
        `The event log records no ${bank} digests (it has ${log.banks.map((b) => b.name ?? `0x${b.alg.toString(16)}`).join(", ")})`,
      ),
    );
    return out;
  }
  const without = eventsWithoutBank(log, bank);
  if (without.length)
    out.push(
      failure("event_log.bank.unknown", `${without.length} measured event(s) carry no ${bank} digest (first: event ${without[0]!.index})`, {
        event: without[0]!.index,
      }),
    );
  // the replay must give each quoted PCR the log covers (the firmware PCRs, and any it extends) its quoted value
  const replayed = replay(log, bank);
  const size = DIGEST_SIZE[TPM_ALG[bank]]!;
  for (const p of selection) {
    if (!(FIRMWARE_PCRS as readonly number[]).includes(p) && !replayed.has(p)) continue;
    const got = quoted.get(p);
    if (!got) continue;
    const want = replayed.get(p) ?? initialPcr(p, size, log.startupLocality);
    if (!want.equals(got))
      out.push(
        failure(
          "event_log.replay.mismatch",
          `Replaying the event log gives PCR ${p} ${short(want.toString("hex"))}; the quote says ${short(got.toString("hex"))}`,
          { pcr: p, expected: want.toString("hex"), actual: got.toString("hex") },
        ),
      );
  }
  if (policy?.events) {
    const unknown = log.events.filter(
      (e) => e.type !== EV_NO_ACTION && e.digests[bank] !== undefined && !policy.events!.has(`${e.pcr}:${e.digests[bank]}`),
    );
    for (const e of unknown.slice(0, MAX_LISTED_EVENTS))
      out.push(
        failure(
          "event_log.event.unknown",
          `Event ${e.index} (${eventTypeName(e.type)} in PCR ${e.pcr}, ${short(e.digests[bank]!)}${e.data ? `: ${e.data.slice(0, 80)}` : ""}) is not one policy ${policy.name} knows`,
          { event: e.index, pcr: e.pcr, actual: e.digests[bank] },
        ),
      );
    if (unknown.length > MAX_LISTED_EVENTS)
      out.push(
        failure(
          "event_log.event.unknown",
          `${unknown.length - MAX_LISTED_EVENTS} more measured event(s) are not ones policy ${policy.name} knows`,
        ),
      );
  }
  return out;
}

const short = (hex: string) => (hex.length > 16 ? `${hex.slice(0, 12)}…` : hex);
