// `npm run bench:handover`: tenant handover, measured. Prints one JSON object:
//   verifier.*    verdicts the attestation verifier judges per second (a quote's ECDSA signature,
//                 its PCR digest, the boot event log replayed and every event looked up), with the
//                 policy compiled once, against a naive verifier that parses the policy again for
//                 each PCR it compares (what checking a stored JSON policy field by field costs);
//                 both judge the same evidence and must agree on every verdict
//   signing.*     verdicts signed as compact JWS (EdDSA) and verified against the key set, per second
//   handover.*    NODES simulated nodes handed over at once through the served app (release, wipe of
//                 SIM_WIPE_S seconds, attestation with the simulated TPM): seconds from the start to
//                 the node back in service, p50 / p99 / slowest, and how many passed (must be all)
// BENCH_SMOKE=1 runs each part briefly (seconds): the figures only show that it runs.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPolicy } from "@/lib/attestation/create-policy";
import { parseEventLog, replay } from "@/lib/attestation/event-log";
import { compilePolicy, referencePolicyFromLog, type CompiledPolicy, type StoredPolicy } from "@/lib/attestation/policy";
import { signingKeyFrom, signJws, verifyJws } from "@/lib/attestation/verdict-jws";
import { verifyEvidence, type Evidence, type VerifyInput } from "@/lib/attestation/verify-evidence";
import { systemActor } from "@/lib/auth/principal";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { createCluster } from "@/lib/fleet/create-cluster";
import { disconnectDb, db } from "@/lib/db/client";
import { putHandoverSettings } from "@/lib/handover/settings";
import { startHandover } from "@/lib/handover/start-handover";
import { bootEventLog, measureBoot } from "../agent/src/sim-boot";
import { SimulatedTpm } from "../agent/src/sim-tpm";
import { simClusters, startSimulator } from "../agent/src/simulator";
import { percentile, round, withBenchStack } from "./lib/harness";
import { flag, printFigures, SMOKE } from "./lib/report";

const VERIFY_S = SMOKE ? 0.5 : Number(process.env.BENCH_VERIFY_S ?? 5);
const NODES = SMOKE ? 2 : Number(process.env.BENCH_HANDOVER_NODES ?? 16);
const WIPE_S = SMOKE ? 1 : Number(process.env.SIM_WIPE_S ?? 3);
const NODE = "0c5d7d64-5b8a-4b59-9a57-6a5d3f0e9b21";
const tempDirFor = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));

/** Evidence documents of clean boots and of boots with an implant, and the golden policy they are judged by. */
async function corpus(): Promise<{ inputs: VerifyInput[]; stored: StoredPolicy }> {
  const log = parseEventLog(bootEventLog());
  const stored: StoredPolicy = {
    id: "bench",
    name: "bench-golden",
    version: 1,
    body: referencePolicyFromLog(log, replay(log), { require: ["event_log", "wipe_report"] }),
  };
  const inputs: VerifyInput[] = [];
  for (let i = 0; i < 16; i++) {
    const tpm = new SimulatedTpm(tempDirFor(`bench-tpm-${i}`));
    const implant = i % 4 === 3;
    const eventLog = await measureBoot(tpm, { implant });
    const nonce = randomBytes(32).toString("hex");
    const q = tpm.quote(nonce, [0, 1, 2, 3, 4, 5, 6, 7]);
    const evidence: Evidence = {
      quote: q.quote,
      signature: q.signature,
      pcrs: q.pcrs,
      eventLog,
      wipeReport: [{ device: "GPU-0", method: "nvidia-smi -r -i 0", result: "ok" }],
      gpuReports: null,
    };
    inputs.push({
      nodeId: NODE,
      nonce,
      nonceRecord: { nodeId: NODE, expiresAt: new Date(Date.now() + 3_600_000), usedAt: null },
      identity: { akPublicPem: tpm.identity().ak_public_pem, akQualifiedName: tpm.identity().ak_qualified_name },
      policy: stored,
      evidence,
      now: new Date(),
    });
  }
  return { inputs, stored };
}

/**
 * The naive verifier: the same checks, but the policy is read from its stored JSON again for each
 * PCR the quote covers (parsed and validated each time), as code that consults a stored document
 * field by field does. Its verdict must be the real verifier's.
 */
function naiveVerify(input: VerifyInput, stored: StoredPolicy) {
  const json = JSON.stringify(stored.body);
  let compiled: CompiledPolicy | null = null;
  for (let pcr = 0; pcr < 8; pcr++) {
    const c = compilePolicy({ ...stored, body: JSON.parse(json) });
    if (!c.ok) return { result: "fail" as const, failures: c.failures };
    compiled = c.policy;
    void compiled.pcrs.get(pcr);
  }
  return verifyEvidence({ ...input, policy: { ...stored, body: JSON.parse(json) } });
}

function rate(fn: () => void, seconds: number): { per_s: number; n: number } {
  let n = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  while (performance.now() < until) {
    fn();
    n++;
  }
  return { per_s: round(n / ((performance.now() - started) / 1000)), n };
}

async function verifier() {
  const { inputs, stored } = await corpus();
  const c = compilePolicy(stored);
  if (!c.ok) throw new Error("the bench policy does not compile");
  const compiled = c.policy;
  // both verifiers agree on every document (the implanted boots fail, the clean ones pass)
  for (const i of inputs) {
    const a = verifyEvidence({ ...i, policy: compiled });
    const b = naiveVerify(i, stored);
    if (a.result !== b.result || JSON.stringify(a.failures) !== JSON.stringify(b.failures)) throw new Error("the verifiers disagree");
  }
  let k = 0;
  const fast = rate(() => verifyEvidence({ ...inputs[k++ % inputs.length]!, policy: compiled }), VERIFY_S);
  let j = 0;
  const naive = rate(() => naiveVerify(inputs[j++ % inputs.length]!, stored), VERIFY_S);
  return {
    documents: inputs.length,
    failing_documents: inputs.filter((i) => verifyEvidence({ ...i, policy: compiled }).result === "fail").length,
    verified_per_s: fast.per_s,
    naive_verified_per_s: naive.per_s,
    speedup: round(fast.per_s / naive.per_s),
  };
}

function signing() {
  const key = signingKeyFrom(randomBytes(32));
  const jwks = { keys: [key.publicJwk] };
  const payload = {
    iss: "gpuforge",
    node_id: NODE,
    result: "pass",
    failures: [],
    policy: "bench-golden",
    policy_version: 1,
    pcr_digest: "ab".repeat(32),
  };
  const signed = rate(() => void signJws(payload, key), VERIFY_S);
  const jws = signJws(payload, key);
  const checked = rate(() => {
    if (!verifyJws(jws, jwks).ok) throw new Error("a verdict did not verify");
  }, VERIFY_S);
  return { signed_per_s: signed.per_s, verified_per_s: checked.per_s };
}

async function handover() {
  process.env.ATTESTATION_SIGNING_KEY ??= randomBytes(32).toString("hex");
  // the simulated nodes live on loopback addresses of this machine
  process.env.NODE_ADDRESS_NETWORKS ??= "127.0.0.0/8";
  return withBenchStack(async ({ baseUrl }) => {
    const cluster = await createCluster(systemActor, { name: "bench-handover", region: "bench-1", provider: "bench" });
    const log = parseEventLog(bootEventLog());
    const policy = await createPolicy(systemActor, {
      name: "bench-golden",
      ...referencePolicyFromLog(log, replay(log), { require: ["event_log", "wipe_report"] }),
    });
    await putHandoverSettings(systemActor, cluster.id, {
      wipe_command: "simulated-wipe --all",
      wipe_timeout_s: 600,
      attestation: "required",
      attestation_policy_id: policy.id,
      attestation_timeout_s: 600,
    });
    const { key } = await createApiKey(systemActor, { name: "bench agents", scope: "agent", cluster_id: cluster.id });
    const perRack = Math.max(1, Math.ceil(NODES / 4));
    const sim = startSimulator({
      baseUrl,
      clusters: simClusters({ [cluster.id]: key }, { pods: 1, racksPerPod: Math.ceil(NODES / perRack), nodesPerRack: perRack }, ["H100"]),
      heartbeatS: 1,
      metricsS: 5,
      stateDir: tempDirFor("bench-handover-sim"),
      wipeS: WIPE_S,
      tpm: "simulated",
      log: () => {},
    });
    try {
      await sim.ready;
      const nodes = await waitAvailable(cluster.id, sim.nodes.length);
      const started = Date.now();
      await Promise.all(nodes.map((n) => startHandover(systemActor, n.id, { mode: "full", reason: "bench" })));
      const done = new Map<string, number>();
      const deadline = started + 600_000;
      while (done.size < nodes.length && Date.now() < deadline) {
        const rows = await db().node.findMany({
          where: { clusterId: cluster.id, status: { in: ["available", "quarantined"] } },
          select: { id: true, status: true },
        });
        for (const r of rows) if (!done.has(r.id) && r.status === "available") done.set(r.id, (Date.now() - started) / 1000);
        if (rows.some((r) => r.status === "quarantined")) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const secs = [...done.values()].sort((a, b) => a - b);
      return {
        nodes: nodes.length,
        wipe_s: WIPE_S,
        passed: done.size,
        p50_s: round(percentile(secs, 50)),
        p99_s: round(percentile(secs, 99)),
        slowest_s: round(secs.at(-1) ?? 0),
      };
    } finally {
      sim.stop();
    }
  });
}

async function waitAvailable(clusterId: string, count: number) {
  for (let i = 0; i < 600; i++) {
    const nodes = await db().node.findMany({ where: { clusterId, status: "available" }, select: { id: true } });
    if (nodes.length === count) return nodes;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the simulated nodes did not come into service");
}

async function main() {
  const out = { smoke: flag(SMOKE), verifier: await verifier(), signing: signing(), handover: await handover() };
  printFigures(out);
  await disconnectDb();
  if (out.handover.passed !== out.handover.nodes) process.exit(1);
}

main().catch(async (e: unknown) => {
  console.error(e);
  await disconnectDb().catch(() => {});
  process.exit(1);
});
