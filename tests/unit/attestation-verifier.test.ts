import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildEventLog, EVENT_TYPES, parseEventLog, replay } from "@/lib/attestation/event-log";
import { FAILURE_CATALOGUE, FAILURE_CODES } from "@/lib/attestation/failures";
import { compilePolicy, policyBodySchema, referencePolicyFromLog, type PolicyBody } from "@/lib/attestation/policy";
import { parseAttest, parseSignature, serializeAttest, StructureError, TPM_ALG } from "@/lib/attestation/tpm-structures";
import { verifyEvidence, type Evidence, type VerifyInput } from "@/lib/attestation/verify-evidence";
import { bootEventLog, measureBoot } from "../../agent/src/sim-boot";
import { SimulatedTpm } from "../../agent/src/sim-tpm";
import { tempDir } from "../support/temp-dir";

// The verifier on its own (pure): every check, good and bad, with evidence from the simulated TPM
// (the same formats tpm2_quote writes; tests/unit/attestation-swtpm.test.ts drives a real
// software TPM). Each bad input must fail with its own named failure, and every failure found is
// reported, not only the first.

const NODE = "0b5a5f32-98b2-4b8e-9d9e-2f7b2c3f9a10";
const NOW = new Date("2026-12-01T12:00:00Z");
const NONCE = "6a1f0c2de4b95a7781e3c0ffee112233";

async function booted(o: { implant?: boolean; kernel?: string } = {}) {
  const tpm = new SimulatedTpm(tempDir("simtpm-"));
  const log = await measureBoot(tpm, o);
  return { tpm, log };
}

function goldenPolicy(require: PolicyBody["require"] = ["event_log"], extra: Partial<PolicyBody> = {}): PolicyBody {
  const log = parseEventLog(bootEventLog());
  return { ...referencePolicyFromLog(log, replay(log), { require, ...(extra.gpu ? { gpu: extra.gpu } : {}) }), ...extra };
}

function input(over: Partial<VerifyInput> & { evidence: Evidence }, tpm?: SimulatedTpm): VerifyInput {
  return {
    nodeId: NODE,
    nonce: NONCE,
    nonceRecord: { nodeId: NODE, expiresAt: new Date(NOW.getTime() + 60_000), usedAt: null },
    identity: tpm ? { akPublicPem: tpm.identity().ak_public_pem, akQualifiedName: tpm.identity().ak_qualified_name } : null,
    policy: { id: "p1", name: "golden", version: 3, body: goldenPolicy() },
    now: NOW,
    ...over,
  };
}

async function goodEvidence(o: { implant?: boolean; kernel?: string } = {}) {
  const { tpm, log } = await booted(o);
  const q = tpm.quote(NONCE, [0, 1, 2, 3, 4, 5, 6, 7]);
  const evidence: Evidence = { quote: q.quote, signature: q.signature, pcrs: q.pcrs, eventLog: log, wipeReport: null, gpuReports: null };
  return { tpm, evidence, q };
}

const codes = (v: { failures: Array<{ code: string }> }) => v.failures.map((f) => f.code);

describe("the attestation verifier", () => {
  it("passes a good quote with its event log against the policy made from a clean boot", async () => {
    const { tpm, evidence } = await goodEvidence();
    const v = verifyEvidence(input({ evidence }, tpm));
    expect(v.failures).toEqual([]);
    expect(v).toMatchObject({ result: "pass", policy: { name: "golden", version: 3 }, events: 21 });
    expect(v.pcrDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(v.pcrs)).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
  });

  it("a changed kernel measurement fails with the PCR against the reference and the event it does not know", async () => {
    const { tpm, evidence } = await goodEvidence({ kernel: "vmlinuz-6.8.0-99-custom" });
    const v = verifyEvidence(input({ evidence }, tpm));
    expect(v.result).toBe("fail");
    expect(codes(v).sort()).toEqual(["event_log.event.unknown", "policy.pcr.mismatch"]);
    expect(v.failures.find((f) => f.code === "policy.pcr.mismatch")).toMatchObject({ pcr: 4, severity: "error" });
    // the kernel is the log's last event: a boot application in PCR 4
    expect(v.failures.find((f) => f.code === "event_log.event.unknown")).toMatchObject({ event: 20, pcr: 4 });
    expect(v.failures.find((f) => f.code === "event_log.event.unknown")!.message).toContain("EV_EFI_BOOT_SERVICES_APPLICATION in PCR 4");
  });

  it("an implant before the kernel is caught the same way", async () => {
    const { tpm, evidence } = await goodEvidence({ implant: true });
    const v = verifyEvidence(input({ evidence }, tpm));
    expect(codes(v).sort()).toEqual(["event_log.event.unknown", "policy.pcr.mismatch"]);
  });

  it("a replayed quote (its nonce already used) fails as a replay", async () => {
    const { tpm, evidence } = await goodEvidence();
    const v = verifyEvidence(
      input(
        { evidence, nonceRecord: { nodeId: NODE, expiresAt: new Date(NOW.getTime() + 1000), usedAt: new Date(NOW.getTime() - 5000) } },
        tpm,
      ),
    );
    expect(codes(v)).toEqual(["nonce.value.reused"]);
  });

  it("an expired nonce, a nonce never issued, and one issued to another node each fail by name", async () => {
    const { tpm, evidence } = await goodEvidence();
    expect(codes(verifyEvidence(input({ evidence, nonceRecord: { nodeId: NODE, expiresAt: NOW, usedAt: null } }, tpm)))).toEqual([
      "nonce.value.expired",
    ]);
    expect(codes(verifyEvidence(input({ evidence, nonceRecord: null }, tpm)))).toEqual(["nonce.value.unknown"]);
    expect(
      codes(
        verifyEvidence(
          input({ evidence, nonceRecord: { nodeId: "another", expiresAt: new Date(NOW.getTime() + 1e5), usedAt: null } }, tpm),
        ),
      ),
    ).toEqual(["nonce.value.unknown"]);
  });

  it("a quote over the wrong nonce fails", async () => {
    const { tpm } = await booted();
    const q = tpm.quote("00".repeat(16), [0, 1, 2, 3, 4, 5, 6, 7]);
    const v = verifyEvidence(
      input(
        {
          evidence: { quote: q.quote, signature: q.signature, pcrs: q.pcrs, eventLog: bootEventLog(), wipeReport: null, gpuReports: null },
        },
        tpm,
      ),
    );
    expect(codes(v)).toEqual(["quote.nonce.mismatch"]);
  });

  it("a PCR value edited after quoting fails on the quote's digest (and on what the edit breaks besides)", async () => {
    const { tpm, evidence } = await goodEvidence();
    const pcrs = { sha256: { ...evidence.pcrs!.sha256!, "4": "ab".repeat(32) } };
    const v = verifyEvidence(input({ evidence: { ...evidence, pcrs } }, tpm));
    expect(codes(v)).toContain("quote.pcr_digest.mismatch");
    expect(codes(v).sort()).toEqual(["event_log.replay.mismatch", "policy.pcr.mismatch", "quote.pcr_digest.mismatch"]);
  });

  it("an edit that hides a bad PCR behind the reference value is still caught by the quote's digest", async () => {
    const { tpm, evidence } = await goodEvidence({ implant: true });
    const golden = goodPcrs();
    const pcrs = { sha256: { ...evidence.pcrs!.sha256!, "4": golden["4"]! } };
    const log = bootEventLog(); // the clean log, to match
    const v = verifyEvidence(input({ evidence: { ...evidence, pcrs, eventLog: log } }, tpm));
    expect(codes(v)).toEqual(["quote.pcr_digest.mismatch"]);
  });

  it("an AK swap (a quote signed by another TPM) fails on the signer and the signature", async () => {
    const { tpm: other, evidence } = await goodEvidence();
    const pinned = new SimulatedTpm(tempDir("simtpm-"));
    const v = verifyEvidence(input({ evidence }, pinned));
    expect(codes(v).sort()).toEqual(["quote.signature.invalid", "quote.signer.mismatch"]);
    // without a pinned Name, the signature alone still refuses it
    const v2 = verifyEvidence(input({ evidence, identity: { akPublicPem: pinned.identity().ak_public_pem, akQualifiedName: null } }));
    expect(codes(v2)).toEqual(["quote.signature.invalid"]);
    expect(other.identity().ak_qualified_name).not.toBe(pinned.identity().ak_qualified_name);
  });

  it("a flipped byte of the quote's signature, or of the quote, fails the signature", async () => {
    const { tpm, evidence } = await goodEvidence();
    const sig = Buffer.from(evidence.signature!);
    sig[sig.length - 3]! ^= 0x01;
    expect(codes(verifyEvidence(input({ evidence: { ...evidence, signature: sig } }, tpm)))).toEqual(["quote.signature.invalid"]);
    const quote = Buffer.from(evidence.quote!);
    quote[20]! ^= 0x01; // inside the signer's Name
    expect(codes(verifyEvidence(input({ evidence: { ...evidence, quote } }, tpm))).sort()).toEqual([
      "quote.signature.invalid",
      "quote.signer.mismatch",
    ]);
  });

  it("missing evidence is a failure per missing part, and nothing passes by default", () => {
    const v = verifyEvidence(
      input({ evidence: { quote: null, signature: null, pcrs: null, eventLog: null, wipeReport: null, gpuReports: null } }),
    );
    expect(codes(v).sort()).toEqual(
      [
        "evidence.event_log.missing",
        "evidence.pcrs.missing",
        "evidence.quote.missing",
        "evidence.signature.missing",
        "identity.ak.missing",
      ].sort(),
    );
    const required = goldenPolicy(["event_log", "wipe_report", "gpu_reports"], { gpu: { driver_versions: ["560.35.03"] } });
    const v2 = verifyEvidence(
      input({
        evidence: { quote: null, signature: null, pcrs: null, eventLog: null, wipeReport: null, gpuReports: null },
        policy: { id: "p", name: "all", version: 1, body: required },
      }),
    );
    expect(codes(v2)).toEqual(expect.arrayContaining(["evidence.wipe_report.missing", "evidence.gpu_reports.missing"]));
  });

  it("no policy, or a stored policy lacking a section, fails: never read as off", async () => {
    const { tpm, evidence } = await goodEvidence();
    expect(codes(verifyEvidence(input({ evidence, policy: null }, tpm)))).toEqual(["policy.assignment.missing"]);
    const { require: _r, ...noRequire } = goldenPolicy();
    const v = verifyEvidence(input({ evidence, policy: { id: "p", name: "old", version: 1, body: noRequire } }, tpm));
    expect(codes(v)).toEqual(["policy.section.missing"]);
    expect(v.failures[0]!.message).toContain("require");
    const { events: _e, ...noEvents } = goldenPolicy();
    expect(codes(verifyEvidence(input({ evidence, policy: { id: "p", name: "old", version: 1, body: noEvents } }, tpm)))).toEqual([
      "policy.section.missing",
    ]);
    const badPcr = { ...goldenPolicy(), pcrs: { "4": "not a digest" } };
    expect(codes(verifyEvidence(input({ evidence, policy: { id: "p", name: "old", version: 1, body: badPcr } }, tpm)))).toEqual([
      "policy.section.invalid",
    ]);
  });

  it("an unknown PCR bank in the quote or the values, and values outside the quote, fail", async () => {
    const { tpm, evidence, q } = await goodEvidence();
    const a = parseAttest(q.quote);
    const sha1Quote = serializeAttest({ ...a, pcrSelect: [{ hashAlg: TPM_ALG.sha1, pcrs: [0, 1, 2, 3, 4, 5, 6, 7] }] });
    const v = verifyEvidence(input({ evidence: { ...evidence, quote: sha1Quote } }, tpm));
    expect(codes(v)).toEqual(expect.arrayContaining(["quote.pcr_bank.unknown", "quote.pcr.unselected", "quote.signature.invalid"]));
    const pcrs = { sha256: { ...evidence.pcrs!.sha256!, "9": "00".repeat(32) }, sha1: { "0": "00".repeat(20) } };
    expect(codes(verifyEvidence(input({ evidence: { ...evidence, pcrs } }, tpm))).sort()).toEqual([
      "pcrs.bank.unknown",
      "pcrs.value.unquoted",
    ]);
    const short = { sha256: { ...evidence.pcrs!.sha256!, "3": "abc" } };
    expect(codes(verifyEvidence(input({ evidence: { ...evidence, pcrs: short } }, tpm))).sort()).toEqual([
      "pcrs.value.malformed",
      "pcrs.value.missing",
    ]);
  });

  it("a quote that leaves out a PCR the policy checks fails", async () => {
    const { tpm, log } = await booted();
    const q = tpm.quote(NONCE, [0, 1, 2, 3]);
    const v = verifyEvidence(
      input({ evidence: { quote: q.quote, signature: q.signature, pcrs: q.pcrs, eventLog: log, wipeReport: null, gpuReports: null } }, tpm),
    );
    expect(codes(v)).toEqual(["quote.pcr.unselected", "quote.pcr.unselected", "quote.pcr.unselected", "quote.pcr.unselected"]);
    expect(v.failures.map((f) => f.pcr)).toEqual([4, 5, 6, 7]);
  });

  it("an event log that does not replay to the quoted PCRs, a log without SHA-256, and a malformed log each fail by name", async () => {
    const { tpm, evidence } = await goodEvidence();
    // a log with an event the TPM never saw
    const extra = buildEventLog([
      ...parseLogEvents(bootEventLog()),
      { pcr: 2, type: EVENT_TYPES.EV_EFI_BOOT_SERVICES_DRIVER!, data: Buffer.from("hidden") },
    ]);
    expect(codes(verifyEvidence(input({ evidence: { ...evidence, eventLog: extra } }, tpm))).sort()).toEqual([
      "event_log.event.unknown",
      "event_log.replay.mismatch",
    ]);
    expect(
      codes(verifyEvidence(input({ evidence: { ...evidence, eventLog: Buffer.from("not a log at all, not even close") } }, tpm))),
    ).toEqual(["event_log.structure.malformed"]);
    expect(codes(verifyEvidence(input({ evidence: { ...evidence, eventLog: sha1OnlyLog() } }, tpm)))).toEqual(["event_log.bank.unknown"]);
  });

  it("reports every failure at once: a replayed, re-signed, edited quote from an unknown node fails on each count", async () => {
    const { evidence } = await goodEvidence({ implant: true });
    const pinned = new SimulatedTpm(tempDir("simtpm-"));
    const pcrs = { sha256: { ...evidence.pcrs!.sha256!, "0": "11".repeat(32) } };
    const v = verifyEvidence(
      input({
        evidence: {
          ...evidence,
          pcrs,
          wipeReport: [{ device: "nvme0n1", method: "blkdiscard", result: "failed", message: "device busy" }],
        },
        nonceRecord: { nodeId: NODE, expiresAt: new Date(NOW.getTime() - 1), usedAt: new Date(NOW.getTime() - 2) },
        identity: { akPublicPem: pinned.identity().ak_public_pem, akQualifiedName: pinned.identity().ak_qualified_name },
      }),
    );
    expect(new Set(codes(v))).toEqual(
      new Set([
        "nonce.value.reused",
        "nonce.value.expired",
        "quote.signer.mismatch",
        "quote.signature.invalid",
        "quote.pcr_digest.mismatch",
        "policy.pcr.mismatch",
        "event_log.replay.mismatch",
        "event_log.event.unknown",
        "wipe.device.failed",
      ]),
    );
    expect(v.failures.find((f) => f.code === "wipe.device.failed")).toMatchObject({ device: "nvme0n1" });
  });

  it("checks GPU reports against the allowed driver and VBIOS versions when the policy asks", async () => {
    const { tpm, evidence } = await goodEvidence();
    const body = goldenPolicy(["event_log", "gpu_reports"], {
      gpu: { driver_versions: ["560.35.03"], vbios_versions: ["96.00.99.00.01"] },
    });
    const gpuReports = [
      { uuid: "GPU-a", driver_version: "560.35.03", vbios_version: "96.00.99.00.01" },
      { uuid: "GPU-b", driver_version: "535.1", vbios_version: "96.00.99.00.01" },
      { uuid: "GPU-c", driver_version: "560.35.03" },
    ];
    const v = verifyEvidence(input({ evidence: { ...evidence, gpuReports }, policy: { id: "p", name: "gpu", version: 1, body } }, tpm));
    expect(v.failures.map((f) => [f.code, f.device])).toEqual([
      ["gpu.driver.unexpected", "GPU-b"],
      ["gpu.vbios.unexpected", "GPU-c"],
    ]);
    expect(
      codes(verifyEvidence(input({ evidence: { ...evidence, gpuReports: [] }, policy: { id: "p", name: "gpu", version: 1, body } }, tpm))),
    ).toEqual(["gpu.report.empty"]);
  });

  it("a wipe report with no device, or a failed device, fails; an enrolled key that cannot be read fails", async () => {
    const { tpm, evidence } = await goodEvidence();
    expect(codes(verifyEvidence(input({ evidence: { ...evidence, wipeReport: [] } }, tpm)))).toEqual(["wipe.report.empty"]);
    expect(
      codes(
        verifyEvidence(
          input({
            evidence,
            identity: { akPublicPem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----", akQualifiedName: null },
          }),
        ),
      ),
    ).toEqual(["identity.ak.invalid"]);
  });

  it("verifies RSA attestation keys too (RSASSA)", async () => {
    const { evidence } = await goodEvidence();
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const { sign } = await import("node:crypto");
    const sig = sign("sha256", evidence.quote!, privateKey);
    const tpmt = Buffer.concat([Buffer.from([0x00, 0x14, 0x00, 0x0b]), Buffer.from([sig.length >> 8, sig.length & 0xff]), sig]);
    expect(parseSignature(tpmt)).toMatchObject({ sigAlg: 0x14, hashAlg: 0x0b });
    const v = verifyEvidence(
      input({
        evidence: { ...evidence, signature: tpmt },
        identity: { akPublicPem: publicKey.export({ type: "spki", format: "pem" }).toString(), akQualifiedName: null },
      }),
    );
    expect(v.failures).toEqual([]);
  });

  it("every failure id is component.sub.event and has a severity", () => {
    for (const c of FAILURE_CODES) {
      expect(c).toMatch(/^[a-z_]+\.[a-z_]+\.[a-z_]+$/);
      expect(["critical", "error"]).toContain(FAILURE_CATALOGUE[c].severity);
    }
  });
});

describe("TPM structures and the event log", () => {
  it("refuses truncated or oversized structures, naming the field", async () => {
    const { q } = await goodEvidence();
    expect(() => parseAttest(q.quote.subarray(0, 40))).toThrow(StructureError);
    expect(() => parseAttest(q.quote.subarray(0, 40))).toThrow(/ends inside qualifiedSigner/);
    expect(() => parseAttest(Buffer.concat([q.quote, Buffer.from([0])]))).toThrow(/after its end/);
    expect(() => parseSignature(q.signature.subarray(0, 5))).toThrow(/signatureR/);
    expect(() => parseEventLog(bootEventLog().subarray(0, 100))).toThrow(StructureError);
  });

  it("a StartupLocality event sets PCR 0's starting value", () => {
    const log = parseEventLog(
      buildEventLog([{ pcr: 0, type: EVENT_TYPES.EV_S_CRTM_VERSION!, data: Buffer.from("x") }], { startupLocality: 3 }),
    );
    expect(log.startupLocality).toBe(3);
    const zero = parseEventLog(buildEventLog([{ pcr: 0, type: EVENT_TYPES.EV_S_CRTM_VERSION!, data: Buffer.from("x") }]));
    expect(replay(log).get(0)!.equals(replay(zero).get(0)!)).toBe(false);
  });
});

describe("policies", () => {
  const base = goldenPolicy();

  it("refuses a policy without a required section, naming it", () => {
    for (const section of ["pcr_bank", "pcrs", "require"] as const) {
      const { [section]: _gone, ...rest } = base;
      const r = policyBodySchema.safeParse(rest);
      expect(r.success).toBe(false);
      expect(r.error!.issues[0]!.path).toEqual([section]);
    }
    const noEvents = policyBodySchema.safeParse({ ...base, events: undefined });
    expect(noEvents.error!.issues[0]!.path).toEqual(["events"]);
    const noGpu = policyBodySchema.safeParse({ ...base, require: ["gpu_reports"] });
    expect(noGpu.error!.issues[0]!.path).toEqual(["gpu"]);
  });

  it("refuses other banks, bad digests and PCR indices, unknown sections and event types", () => {
    const bad = [
      { ...base, pcr_bank: "sha1" },
      { ...base, pcrs: { "24": "00".repeat(32) } },
      { ...base, pcrs: { "4": "zz" } },
      { ...base, pcrs: {} },
      { ...base, require: ["event_log", "event_log"] },
      { ...base, surprise: true },
      { ...base, events: [{ pcr: 4, digest: "00".repeat(32), type: "EV_MADE_UP" }] },
    ];
    for (const b of bad) expect(policyBodySchema.safeParse(b).success, JSON.stringify(b).slice(0, 80)).toBe(false);
    expect(compilePolicy({ id: "p", name: "n", version: 1, body: base })).toMatchObject({ ok: true });
  });
});

function goodPcrs(): Record<string, string> {
  const log = parseEventLog(bootEventLog());
  return Object.fromEntries([...replay(log)].map(([k, v]) => [String(k), v.toString("hex")]));
}

function parseLogEvents(buf: Buffer) {
  return parseEventLog(buf)
    .events.filter((e) => e.type !== 3)
    .map((e) => ({ pcr: e.pcr, type: e.type, data: Buffer.alloc(0), sha256: Buffer.from(e.digests.sha256!, "hex") }));
}

/** A crypto-agile log whose Spec ID declares SHA-1 only. */
function sha1OnlyLog(): Buffer {
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    return b;
  };
  const spec = Buffer.concat([
    Buffer.from("Spec ID Event03\0", "latin1"),
    u32(0),
    Buffer.from([0, 2, 0, 2]),
    u32(1),
    Buffer.from([0x04, 0x00, 20, 0]),
    Buffer.from([0]),
  ]);
  const event = Buffer.concat([u32(0), u32(8), u32(1), Buffer.from([0x04, 0x00]), Buffer.alloc(20, 7), u32(1), Buffer.from("x")]);
  return Buffer.concat([u32(0), u32(3), Buffer.alloc(20), u32(spec.length), spec, event]);
}
