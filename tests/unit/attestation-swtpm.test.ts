import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEventLog, replay } from "@/lib/attestation/event-log";
import { referencePolicyFromLog, type PolicyBody } from "@/lib/attestation/policy";
import { signingKeyFrom, signJws, verifyJws } from "@/lib/attestation/verdict-jws";
import { verifyEvidence, type Evidence, type VerifyInput } from "@/lib/attestation/verify-evidence";
import { bootEventLog, measureBoot } from "../../agent/src/sim-boot";
import { startSwtpm, type RunningSwtpm } from "../../agent/src/swtpm";
import { Tpm2Tools, type TpmIdentity } from "../../agent/src/tpm";
import { ensureSystemTool } from "../support/system-packages";
import { tempDir } from "../support/temp-dir";

// The verifier against a real software TPM (Debian's swtpm) driven by tpm2-tools, the way a node's
// agent drives its TPM: boot measurements extended into the PCRs, an attestation key made under
// the endorsement key and persisted, quotes from tpm2_quote. Each bad case fails with its own
// named failure, and tpm2-tools' own verifier (tpm2_checkquote) and event log reader
// (tpm2_eventlog) agree with ours on every case they can judge.

ensureSystemTool("swtpm", "tpm2Tools");
const exec = promisify(execFile);
const NODE = "7d1c5f0e-3f0a-4b8e-9d9e-2f7b2c3f9a10";
const ALL = [0, 1, 2, 3, 4, 5, 6, 7];

interface Node {
  dir: string;
  swtpm: RunningSwtpm;
  tpm: Tpm2Tools;
  identity: TpmIdentity;
}

const nodes: Node[] = [];

/** A node whose TPM has booted (PCRs measured from zero); booting again keeps its TPM state, so its AK. */
async function boot(dir: string, o: { kernel?: string; implant?: boolean } = {}): Promise<Node & { log: Buffer }> {
  const swtpm = await startSwtpm(path.join(dir, "state"));
  const tpm = new Tpm2Tools({ workDir: path.join(dir, "work"), tcti: swtpm.tcti });
  const log = await measureBoot(tpm, o);
  const identity = await tpm.identity();
  const n = { dir, swtpm, tpm, identity };
  nodes.push(n);
  return { ...n, log };
}

async function shutdown(n: Node) {
  await n.swtpm.stop();
  nodes.splice(nodes.indexOf(n), 1);
}

afterAll(async () => {
  for (const n of [...nodes]) await n.swtpm.stop();
});

const golden: PolicyBody = (() => {
  const log = parseEventLog(bootEventLog());
  return referencePolicyFromLog(log, replay(log), { require: ["event_log"] });
})();

const fresh = (nonce: string, now = new Date()) => ({ nodeId: NODE, expiresAt: new Date(now.getTime() + 60_000), usedAt: null });

function input(n: Pick<Node, "identity">, nonce: string, evidence: Evidence, over: Partial<VerifyInput> = {}): VerifyInput {
  return {
    nodeId: NODE,
    nonce,
    nonceRecord: fresh(nonce),
    identity: { akPublicPem: n.identity.ak_public_pem, akQualifiedName: n.identity.ak_qualified_name },
    policy: { id: "golden", name: "golden", version: 1, body: golden },
    evidence,
    now: new Date(),
    ...over,
  };
}

const codes = (v: { failures: Array<{ code: string }> }) => v.failures.map((f) => f.code).sort();
const nonceHex = () => Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString("hex");

/** tpm2-tools' own verdict on the same quote (exit status 0: valid). */
async function checkquote(dir: string, akPem: string, quote: Buffer, sig: Buffer, pcrsFile: Buffer, nonce: string): Promise<boolean> {
  const f = (name: string, data: Buffer | string) => {
    const p = path.join(dir, `check-${name}`);
    writeFileSync(p, data);
    return p;
  };
  const args = [
    "-u",
    f("ak.pem", akPem),
    "-m",
    f("quote.msg", quote),
    "-s",
    f("quote.sig", sig),
    "-f",
    f("quote.pcrs", pcrsFile),
    "-g",
    "sha256",
    "-q",
    nonce,
  ];
  return exec("tpm2_checkquote", args).then(
    () => true,
    () => false,
  );
}

/** A quote as tpm2_quote wrote it, with the PCR file it wrote beside it (-o), which tpm2_checkquote reads. */
async function quoteWithPcrFile(n: Node, nonce: string) {
  const q = await n.tpm.quote(nonce, ALL);
  return { ...q, pcrsFile: readFileSync(path.join(n.dir, "work", "quote.pcrs")) };
}

describe("attestation with a real software TPM", () => {
  let node: Node & { log: Buffer };
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("swtpm-node-");
    node = await boot(dir);
  });

  it("enrols an ECC attestation key once, persisted: the same key after a reboot", async () => {
    expect(node.identity.ak_public_pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(node.identity.ak_qualified_name).toMatch(/^000b[0-9a-f]{64}$/);
    expect(node.identity.ek_public_pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    await shutdown(node);
    node = await boot(dir);
    const again = await node.tpm.identity();
    expect(again.ak_qualified_name).toBe(node.identity.ak_qualified_name);
    expect(again.ak_public_pem).toBe(node.identity.ak_public_pem);
  });

  it("our event log parser and replay agree with tpm2_eventlog, and the replay matches what the TPM measured", async () => {
    const file = path.join(dir, "boot.log");
    writeFileSync(file, node.log);
    const { stdout } = await exec("tpm2_eventlog", [file]);
    const theirs = Object.fromEntries(
      [...stdout.split("sha256:")[1]!.matchAll(/^\s+(\d+)\s*:\s*0x([0-9a-fA-F]{64})/gm)].map((m) => [m[1], m[2]!.toLowerCase()]),
    );
    const ours = Object.fromEntries([...replay(parseEventLog(node.log))].map(([k, v]) => [String(k), v.toString("hex")]));
    expect(ours).toEqual(theirs);
    const q = await node.tpm.quote(nonceHex(), ALL);
    expect(q.pcrs.sha256).toEqual(ours);
  });

  it("a good quote passes, and tpm2_checkquote agrees", async () => {
    const nonce = nonceHex();
    const q = await quoteWithPcrFile(node, nonce);
    const v = verifyEvidence(
      input(node, nonce, { quote: q.quote, signature: q.signature, pcrs: q.pcrs, eventLog: node.log, wipeReport: null, gpuReports: null }),
    );
    expect(v.failures).toEqual([]);
    expect(v.result).toBe("pass");
    expect(await checkquote(dir, node.identity.ak_public_pem, q.quote, q.signature, q.pcrsFile, nonce)).toBe(true);
  });

  it("a changed kernel measurement fails against the reference values (tpm2_checkquote, which knows no policy, passes it)", async () => {
    const other = await boot(tempDir("swtpm-kernel-"), { kernel: "vmlinuz-6.9.0-rc1-custom" });
    const nonce = nonceHex();
    const q = await quoteWithPcrFile(other, nonce);
    const v = verifyEvidence(
      input(other, nonce, {
        quote: q.quote,
        signature: q.signature,
        pcrs: q.pcrs,
        eventLog: other.log,
        wipeReport: null,
        gpuReports: null,
      }),
    );
    expect(codes(v)).toEqual(["event_log.event.unknown", "policy.pcr.mismatch"]);
    expect(v.failures.find((f) => f.code === "policy.pcr.mismatch")!.pcr).toBe(4);
    expect(await checkquote(other.dir, other.identity.ak_public_pem, q.quote, q.signature, q.pcrsFile, nonce)).toBe(true);
    await shutdown(other);
  });

  it("a replayed old quote fails as a replay (tpm2_checkquote has no memory of nonces and cannot tell)", async () => {
    const nonce = nonceHex();
    const q = await quoteWithPcrFile(node, nonce);
    const evidence: Evidence = {
      quote: q.quote,
      signature: q.signature,
      pcrs: q.pcrs,
      eventLog: node.log,
      wipeReport: null,
      gpuReports: null,
    };
    const first = verifyEvidence(input(node, nonce, evidence));
    expect(first.result).toBe("pass");
    const replayed = verifyEvidence(input(node, nonce, evidence, { nonceRecord: { ...fresh(nonce), usedAt: new Date() } }));
    expect(codes(replayed)).toEqual(["nonce.value.reused"]);
    // answering a new nonce with the old quote fails on the nonce
    const next = nonceHex();
    expect(codes(verifyEvidence(input(node, next, evidence)))).toEqual(["quote.nonce.mismatch"]);
    expect(await checkquote(dir, node.identity.ak_public_pem, q.quote, q.signature, q.pcrsFile, next)).toBe(false);
  });

  it("a quote over the wrong nonce fails, and tpm2_checkquote agrees", async () => {
    const asked = nonceHex();
    const used = nonceHex();
    const q = await quoteWithPcrFile(node, used);
    const v = verifyEvidence(
      input(node, asked, { quote: q.quote, signature: q.signature, pcrs: q.pcrs, eventLog: node.log, wipeReport: null, gpuReports: null }),
    );
    expect(codes(v)).toEqual(["quote.nonce.mismatch"]);
    expect(await checkquote(dir, node.identity.ak_public_pem, q.quote, q.signature, q.pcrsFile, asked)).toBe(false);
  });

  it("a PCR value edited after quoting fails on the quote's digest, and tpm2_checkquote agrees", async () => {
    const nonce = nonceHex();
    const q = await quoteWithPcrFile(node, nonce);
    const real = q.pcrs.sha256["4"]!;
    const forged = "5a".repeat(32);
    const v = verifyEvidence(
      input(node, nonce, {
        quote: q.quote,
        signature: q.signature,
        pcrs: { sha256: { ...q.pcrs.sha256, "4": forged } },
        eventLog: node.log,
        wipeReport: null,
        gpuReports: null,
      }),
    );
    expect(codes(v)).toContain("quote.pcr_digest.mismatch");
    const at = q.pcrsFile.indexOf(Buffer.from(real, "hex"));
    expect(at).toBeGreaterThan(0);
    const edited = Buffer.from(q.pcrsFile);
    Buffer.from(forged, "hex").copy(edited, at);
    expect(await checkquote(dir, node.identity.ak_public_pem, q.quote, q.signature, edited, nonce)).toBe(false);
  });

  it("an AK swap (the quote signed by another node's TPM) fails on the signer and the signature, and tpm2_checkquote agrees", async () => {
    const thief = await boot(tempDir("swtpm-thief-"));
    expect(thief.identity.ak_qualified_name).not.toBe(node.identity.ak_qualified_name);
    const nonce = nonceHex();
    const q = await quoteWithPcrFile(thief, nonce);
    const v = verifyEvidence(
      input(node, nonce, { quote: q.quote, signature: q.signature, pcrs: q.pcrs, eventLog: thief.log, wipeReport: null, gpuReports: null }),
    );
    expect(codes(v)).toEqual(["quote.signature.invalid", "quote.signer.mismatch"]);
    expect(await checkquote(dir, node.identity.ak_public_pem, q.quote, q.signature, q.pcrsFile, nonce)).toBe(false);
    await shutdown(thief);
  });

  it("a flipped byte in the quote's signature fails, and tpm2_checkquote agrees", async () => {
    const nonce = nonceHex();
    const q = await quoteWithPcrFile(node, nonce);
    const sig = Buffer.from(q.signature);
    sig[10]! ^= 0x80;
    const v = verifyEvidence(
      input(node, nonce, { quote: q.quote, signature: sig, pcrs: q.pcrs, eventLog: node.log, wipeReport: null, gpuReports: null }),
    );
    expect(codes(v)).toEqual(["quote.signature.invalid"]);
    expect(await checkquote(dir, node.identity.ak_public_pem, q.quote, sig, q.pcrsFile, nonce)).toBe(false);
  });

  it("a flipped byte in a verdict's JWS signature fails its check", async () => {
    const key = signingKeyFrom(Buffer.alloc(32, 7));
    const jws = signJws({ node_id: NODE, result: "pass" }, key);
    expect(verifyJws(jws, { keys: [key.publicJwk] })).toMatchObject({ ok: true });
    const [h, p, s] = jws.split(".");
    const bytes = Buffer.from(s!, "base64url");
    bytes[0]! ^= 0x01;
    expect(verifyJws(`${h}.${p}.${bytes.toString("base64url")}`, { keys: [key.publicJwk] })).toMatchObject({
      ok: false,
      code: "jws.signature.invalid",
    });
  });
});
