// `npm run bench:remediation`: what happens at 3 a.m. Runs the production build with the fleet
// simulator (16 nodes × 8 GPUs), then prints one JSON object:
//   fault_to_quarantine_ms              XID 79 injected on a GPU under a running 16-GPU job (two
//                                       nodes) → its node reads `quarantined`. Target < 5,000 ms.
//   fault_to_job_running_again_ms       the same fault → the requeued job reads `running` elsewhere
//   sweep_only_fault_to_quarantine_ms   baseline in the same run: a fault that reaches the platform
//                                       without an event (written straight to the database), so only
//                                       the periodic evaluation sweep can find it
//   quarantines_when_12_nodes_fail_at_once   12 nodes report XID 79 together in a fresh cap window:
//                                       must equal the cap (REMEDIATION_CAP, default 5)
//   capped_alerts_when_12_nodes_fail_at_once  the other 7: critical alerts for a human
//   evaluation_ms                       one full rule evaluation of this fleet, from the bench process
// The deployment runs in production mode, which accepts node addresses only in NODE_ADDRESS_NETWORKS:
// the bench lists the network its simulated nodes' loopback addresses are in, as an operator lists
// the nodes' own networks. BENCH_SMOKE=1 runs every phase as it is (16 nodes; the sweep-only baseline
// waits for the evaluation sweep, up to 15 s).
import { SIM_ADDRESS_NETWORK } from "@/agent/src/sim-addresses";
import { simClusters, startSimulator } from "@/agent/src/simulator";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { evaluateAlerts } from "@/lib/alerts/evaluate-alerts";
import { systemActor } from "@/lib/auth/principal";
import { disconnectDb } from "@/lib/db/client";
import { createCluster } from "@/lib/fleet/create-cluster";
import { createTenant } from "@/lib/tenants/create-tenant";
import { harnessClient } from "../scripts/lib/harness-clients";
import { round, withBenchStack } from "./lib/harness";
import { flag, printFigures } from "./lib/report";

const TARGET_MS = 5_000;
const CAP = 5;

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number, everyMs = 10): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function main() {
  const result = await withBenchStack(
    async ({ baseUrl, databaseUrl }) => {
      const c = harnessClient(databaseUrl, "bench:remediation");
      await c.connect();
      const nodeStatus = async (id: string) =>
        (await c.query<{ status: string }>(`SELECT status FROM nodes WHERE id = $1`, [id])).rows[0]!.status;

      const cluster = await createCluster(systemActor, { name: "bench-remediation", region: null, provider: null });
      const { key: agentKey } = await createApiKey(systemActor, { name: "bench agent", scope: "agent", cluster_id: cluster.id });
      const tenant = await createTenant(systemActor, { name: "bench-tenant", gpu_quota: 64, billing_email: null });
      const { key: tenantKey } = await createApiKey(systemActor, { name: "bench tenant", scope: "tenant", tenant_id: tenant.id });
      const sim = startSimulator({
        baseUrl,
        clusters: simClusters({ [cluster.id]: agentKey }, { pods: 2, racksPerPod: 2, nodesPerRack: 4 }, ["H100"]),
        heartbeatS: 2,
        metricsS: 2,
        log: () => {},
      });
      await sim.ready;
      await new Promise((r) => setTimeout(r, 3_000));
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${tenantKey}`, "content-type": "application/json" },
          body: body ? JSON.stringify(body) : undefined,
        });
        return (await res.json()) as { job: { id: string; status: string; node_ids: string[] } };
      };
      try {
        // a multi-node job: 16 GPUs on two nodes
        const { job } = await call("POST", "/api/jobs", {
          name: "bench-train",
          gpu_count: 16,
          gpu_type: "H100",
          duration_s: 3600,
          priority: 1,
        });
        const running = await until(
          async () => (await call("GET", `/api/jobs/${job.id}`)).job,
          (j) => j.status === "running",
          15_000,
          50,
        );
        const victim = sim.nodes.find((n) => n.id === running.node_ids[0])!;

        // 1. the event path: the agent reports XID 79, the platform acts on its own
        const t0 = performance.now();
        sim.injectFault(victim.hostname, "xid79", 0);
        await sim.reportNow(victim.hostname);
        await until(
          () => nodeStatus(victim.id!),
          (s) => s === "quarantined",
          30_000,
        );
        const faultToQuarantine = performance.now() - t0;
        const moved = await until(
          async () => (await call("GET", `/api/jobs/${job.id}`)).job,
          (j) => j.status === "running" && !j.node_ids.includes(victim.id!),
          30_000,
        );
        const faultToRunning = performance.now() - t0;

        // 2. baseline: the same fault with no event behind it; only the sweep finds it
        const quiet = sim.nodes.find((n) => n.id !== victim.id && !moved.node_ids.includes(n.id!) && !running.node_ids.includes(n.id!))!;
        const t1 = performance.now();
        await c.query(
          `UPDATE gpus SET status = 'unhealthy', unhealthy_reason = 'fatal_xid:79', last_xid = 79, last_xid_at = now() WHERE node_id = $1 AND index = 0`,
          [quiet.id],
        );
        await until(
          () => nodeStatus(quiet.id!),
          (s) => s === "quarantined",
          60_000,
          20,
        );
        const sweepOnly = performance.now() - t1;

        // 3. blast radius: a fresh cap window, then 12 nodes fail at once
        await c.query(`DELETE FROM remediations`);
        const candidates = [];
        for (const n of sim.nodes) if ((await nodeStatus(n.id!)) === "available") candidates.push(n);
        const twelve = candidates.slice(0, 12);
        if (twelve.length < 12) throw new Error(`only ${twelve.length} available nodes left for the blast-radius phase`);
        for (const n of twelve) sim.injectFault(n.hostname, "xid79", 1);
        await Promise.all(twelve.map((n) => sim.reportNow(n.hostname)));
        const decided = async () =>
          (
            await c.query<{ n: number }>(`SELECT count(DISTINCT node_id)::int AS n FROM remediations WHERE node_id = ANY($1::uuid[])`, [
              twelve.map((n) => n.id),
            ])
          ).rows[0]!.n;
        await until(decided, (n) => n === 12, 30_000, 50);
        const { rows: outcome } = await c.query<{ outcome: string; n: number }>(
          `SELECT outcome, count(*)::int AS n FROM remediations GROUP BY outcome`,
        );
        const by = Object.fromEntries(outcome.map((o) => [o.outcome, o.n]));
        const { rows: alerts } = await c.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM alert_events WHERE rule_type = 'remediation_capped' AND status = 'firing' AND severity = 'critical'`,
        );

        const e0 = performance.now();
        await evaluateAlerts();
        const evaluationMs = performance.now() - e0;

        return {
          nodes: sim.nodes.length,
          gpus: sim.nodes.length * 8,
          cap: CAP,
          fault_to_quarantine_ms: round(faultToQuarantine),
          fault_to_job_running_again_ms: round(faultToRunning),
          sweep_only_fault_to_quarantine_ms: round(sweepOnly),
          speedup_vs_sweep: round(sweepOnly / faultToQuarantine, 1),
          quarantines_when_12_nodes_fail_at_once: by.quarantined ?? 0,
          capped_alerts_when_12_nodes_fail_at_once: alerts[0]!.n,
          evaluation_ms: round(evaluationMs),
          target_fault_to_quarantine_ms: TARGET_MS,
          target_met: flag(faultToQuarantine < TARGET_MS && (by.quarantined ?? 0) === CAP),
        };
      } finally {
        sim.stop();
        await c.end();
        // before the database stops under it
        await disconnectDb();
      }
    },
    { env: { NODE_ADDRESS_NETWORKS: SIM_ADDRESS_NETWORK } },
  );
  printFigures(result);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
