// `npm run soak -- --nodes 1000 --minutes 60 [--apps 2] [--ingest 2] [--seed 1] [--report FILE] [--log FILE] [--fast-db]`
//
// The chaos soak: the fleet simulator at N nodes × 8 GPUs against the real app — several app
// processes and ingest servers on one PostgreSQL, as a production deployment runs — with a steady
// tenant workload through the public API and a chaos loop (fatal and benign XIDs, overheating,
// silent nodes, agent restarts that re-send reports, single-node partitions that deliver stale
// reports, app and ingest processes killed and restarted, a database restart, operators' handovers and
// implanted bootkits that attestation must catch). The invariant
// checker (scripts/soak/invariants.ts) runs every few seconds on what must hold at every moment and
// every few minutes on the whole history, and once more after a settle phase at the end.
//
// Prints one JSON report on stdout (also to --report FILE): events injected by kind, violations
// with examples, p50/p99 of submit → running and fault → quarantine during chaos, CPU and memory
// per process, database growth per hour. Exits 1 on any violation, 2 when the run itself failed; when
// the fleet cannot register, the report names the node the control plane refused and why.
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { randomBytes } from "node:crypto";
import { SIM_ADDRESS_NETWORK } from "../agent/src/sim-addresses";
import { FleetRegistrationError, startSimulator } from "../agent/src/simulator";
import { CHAOS_KINDS, startChaos } from "./soak/chaos";
import { chaosLatencies, databaseSize, handoverFigures, sampleProcesses } from "./soak/figures";
import {
  checkAll,
  checkBackgroundFailures,
  checkSnapshot,
  INVARIANTS,
  noteBackgroundFailure,
  type BackgroundFailures,
  type ImplantRecord,
  type ReportRecord,
  type Violation,
} from "./soak/invariants";
import { readWorld } from "./soak/read-world";
import { seedSoakWorld } from "./soak/seed";
import { startTopology } from "./soak/topology";
import { startWorkload } from "./soak/workload";
import { harnessPool } from "./lib/harness-clients";
import { round, seededRandom } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    nodes: { type: "string", default: "200" },
    minutes: { type: "string", default: "5" },
    apps: { type: "string", default: "2" },
    ingest: { type: "string", default: "1" },
    seed: { type: "string", default: "1" },
    report: { type: "string" },
    log: { type: "string" },
    "fast-db": { type: "boolean", default: false },
  },
});
const nodes = Number(args.nodes);
const minutes = Number(args.minutes);
const seed = Number(args.seed);
if (!(nodes >= 2 && minutes > 0 && Number(args.apps) >= 1 && Number(args.ingest) >= 0)) {
  console.error(
    "usage: npm run soak -- --nodes N (≥ 2) --minutes M (> 0) [--apps A (≥ 1)] [--ingest I (≥ 0)] [--seed S] [--report FILE] [--log FILE] [--fast-db]",
  );
  process.exit(2);
}

const logStream = args.log
  ? (mkdirSync(path.dirname(path.resolve(args.log)), { recursive: true }), createWriteStream(args.log))
  : process.stderr;
const log = (m: string) => logStream.write(`${new Date().toISOString()} [soak] ${m}\n`);

/** How the servers run for the soak: faults last about a minute, so nodes go offline after 30 s of silence. */
const OFFLINE_AFTER_S = 30;
const REMEDIATION = { cap: 5, windowS: 600 };
const HEARTBEAT_S = 10;
const LIGHT_CHECK_MS = 15_000;
const FULL_CHECK_MS = Math.min(5 * 60_000, (minutes * 60_000) / 3);
const SETTLE_MS = 60_000;
const EXAMPLES = 5;

/** The run's one JSON report: on stdout, and in --report FILE. */
function writeReport(report: object) {
  const json = JSON.stringify(report, null, 2);
  console.log(json);
  if (args.report) {
    mkdirSync(path.dirname(path.resolve(args.report)), { recursive: true });
    writeFileSync(args.report, `${json}\n`);
  }
}

async function main(): Promise<number> {
  const rng = seededRandom(seed);
  const runStarted = Date.now();
  // the servers log each failed background run as one JSON line: a job failing for minutes is a
  // stall no row shows
  const backgroundFailures = new Map<string, BackgroundFailures>();
  const topology = await startTopology({
    onServerStderr: (_server, line) => {
      if (!line.includes("background job failed")) return;
      try {
        const entry = JSON.parse(line) as { message?: string; job?: string };
        if (entry.message === "background job failed" && entry.job) noteBackgroundFailure(backgroundFailures, entry.job, Date.now());
      } catch {
        /* not one of our log lines */
      }
    },
    apps: Number(args.apps),
    ingest: Number(args.ingest),
    fastDatabase: args["fast-db"]!,
    log,
    env: {
      NEXTAUTH_SECRET: randomBytes(32).toString("base64url"),
      // the key attestation verdicts are signed with (without one, no handover could pass)
      ATTESTATION_SIGNING_KEY: randomBytes(32).toString("hex"),
      LOG_LEVEL: "warn",
      DEMO_MODE: "0",
      NODE_OFFLINE_AFTER_S: String(OFFLINE_AFTER_S),
      AGENT_HEARTBEAT_INTERVAL_S: String(HEARTBEAT_S),
      REMEDIATION_CAP: String(REMEDIATION.cap),
      REMEDIATION_WINDOW_S: String(REMEDIATION.windowS),
      // each simulated node registers a loopback address of its own, where its replicas and pods listen
      NODE_ADDRESS_NETWORKS: SIM_ADDRESS_NETWORK,
      // …on whatever port the machine gives them
      AGENT_PUBLISHED_PORTS: "1024-65535",
    },
  });
  const appUrls = topology.apps.map((a) => a.url);
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-soak-sim-"));
  // the checker's own connections: they must outlive the database restart like the servers' do
  const pool = harnessPool({ connectionString: topology.databaseUrl, max: 2 }, "checker", log);
  const violations = new Map<string, Violation & { seen: number }>();
  const checks = { light: 0, full: 0, failed: 0 };
  const sizes: Array<{ at: number; bytes: number }> = [];
  const reports: ReportRecord[] = [];
  const simErrors: Record<string, number> = {};
  let sim: ReturnType<typeof startSimulator> | undefined;
  try {
    process.env.DATABASE_URL = topology.databaseUrl;
    const world = await seedSoakWorld({
      appUrls,
      nodes,
      alertWindows: { unreachableS: OFFLINE_AFTER_S + 15, temperatureS: 300, temperatureOccurrences: 2 },
    });
    sim = startSimulator({
      baseUrl: appUrls,
      ingestUrl: topology.ingest.map((s) => s.url),
      clusters: world.clusters,
      heartbeatS: HEARTBEAT_S,
      metricsS: HEARTBEAT_S,
      outputEveryS: 30,
      stateDir,
      // the agents retry what fails, and drop log chunks of placements that moved on: counted by why
      log: (m) => {
        const status = /HTTP (\d{3})/.exec(m)?.[1];
        const why = m.includes("retrying")
          ? `retried_${status ?? "unreachable"}`
          : m.startsWith("log of")
            ? `log_refused_${status}`
            : undefined;
        if (why) simErrors[why] = (simErrors[why] ?? 0) + 1;
      },
      onExitReport: ({ report, answer }) =>
        reports.push({
          job_id: report.job_id,
          attempt: report.attempt,
          fence: report.fence,
          status: report.status,
          outcome: answer.outcome,
          at: Date.now(),
          ...(answer.outcome === "accepted" ? {} : { http: answer.status, code: answer.code }),
        }),
    });
    const registered = await sim.ready.then(
      () => true,
      (e: unknown) => {
        if (!(e instanceof FleetRegistrationError)) throw e;
        // the run cannot go on without its fleet: say which node and why, as a report
        log(`the fleet did not register: ${e.message}`);
        writeReport({
          soak: {
            nodes: sim!.nodes.length,
            gpus: world.gpus,
            minutes,
            seed,
            started_at: new Date(runStarted).toISOString(),
            wall_s: round((Date.now() - runStarted) / 1000),
          },
          failure: {
            stage: "fleet_registration",
            node: e.hostname,
            cluster_id: e.clusterId,
            address: e.address,
            ...(e.status === undefined ? {} : { status: e.status, code: e.code ?? null }),
            reason: e.reason,
            nodes_registered_before: sim!.nodes.filter((n) => n.id !== undefined).length,
          },
          ok: false,
        });
        return false;
      },
    );
    if (!registered) return 2;
    log(`${sim.nodes.length} nodes (${world.gpus} GPUs) registered; ${world.tenants.length} tenants`);

    const processes = sampleProcesses(() => [
      ...[...topology.apps, ...topology.ingest].map((s) => ({
        name: s.name,
        pid: s.pid(),
        tree: true,
        restarts: s.restarts,
        unexpectedExits: s.unexpectedExits,
      })),
      { name: "postgresql", pid: topology.databasePid(), tree: true },
      { name: "soak (simulator, workload, checker)", pid: process.pid, tree: false },
    ]);
    const record = (found: Violation[]) => {
      for (const x of found) {
        const key = `${x.invariant}|${x.subject}`;
        if (!violations.has(key)) {
          violations.set(key, { ...x, seen: Date.now() });
          log(`VIOLATION ${x.invariant}: ${x.subject}: ${x.detail}`);
        }
      }
    };
    const workload = startWorkload({
      appUrls,
      tenants: world.tenants,
      gpuTypes: world.gpuTypes,
      rng,
      maxDurationS: Math.max(60, Math.min(300, (minutes * 60) / 4)),
      log,
    });
    const harness = {
      submittedJobIds: workload.submitted,
      reports,
      implants: [] as ImplantRecord[],
      remediationCap: REMEDIATION.cap,
      remediationWindowS: REMEDIATION.windowS,
    };
    const check = async (full: boolean) => {
      // from what the servers logged: holds whether or not the database can be read this round
      record(checkBackgroundFailures(backgroundFailures));
      try {
        // what the soak saw before the read: everything it knows of must be in the rows read next
        const seen = {
          ...harness,
          submittedJobIds: [...harness.submittedJobIds],
          reports: [...harness.reports],
          implants: harness.implants.map((i) => ({ ...i })),
        };
        const w = await readWorld(pool, { full });
        record(full ? checkAll(w, seen) : checkSnapshot(w));
        record(
          [...topology.apps, ...topology.ingest]
            .filter((s) => s.unexpectedExits > 0)
            .map((s) => ({
              invariant: "process_exited_unexpectedly" as const,
              subject: s.name,
              detail: `exited ${s.unexpectedExits} time(s) without being killed`,
            })),
        );
        checks[full ? "full" : "light"]++;
        sizes.push({ at: Date.now(), bytes: await databaseSize(pool) });
      } catch (e) {
        // the database may be restarting: the next round reads again
        checks.failed++;
        log(`check failed: ${(e as Error).message}`);
      }
    };

    const chaosStarted = Date.now();
    const chaos = startChaos({
      sim,
      topology,
      operator: world.operator,
      rng,
      windowMs: minutes * 60_000,
      nodes: sim.nodes.length,
      faultS: [OFFLINE_AFTER_S + 15, OFFLINE_AFTER_S + 45],
      repairAfterS: 60,
      log,
    });
    harness.implants = chaos.implants;

    // the operator invoices every invoiced tenant a few times a run, period after period
    let invoicedUntil = new Date(runStarted - 60_000);
    let invoices = 0;
    const invoiceRound = async () => {
      const until = new Date(Math.floor((Date.now() - 5_000) / 1000) * 1000);
      for (const t of world.tenants.filter((x) => x.billing === "invoice")) {
        await world.operator
          .call("POST", `/api/tenants/${t.id}/invoice`, { period_start: invoicedUntil.toISOString(), period_end: until.toISOString() })
          .then(
            () => invoices++,
            (e: unknown) => !String(e).includes("nothing_to_invoice") && log(`invoice of ${t.name}: ${(e as Error).message}`),
          );
      }
      invoicedUntil = until;
    };

    const deadline = chaosStarted + minutes * 60_000;
    let nextFull = chaosStarted + FULL_CHECK_MS;
    let nextInvoice = chaosStarted + FULL_CHECK_MS / 2;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(LIGHT_CHECK_MS, Math.max(0, deadline - Date.now()))));
      const full = Date.now() >= nextFull;
      if (full) nextFull += FULL_CHECK_MS;
      await check(full);
      if (Date.now() >= nextInvoice) {
        nextInvoice += FULL_CHECK_MS;
        await invoiceRound();
      }
    }
    const chaosEnded = Date.now();
    log("chaos over: clearing faults, stopping the workload, settling");
    await chaos.stop();
    await workload.stop();
    await chaos.repairAll().catch((e: unknown) => log(`repair: ${(e as Error).message}`));
    await new Promise((r) => setTimeout(r, SETTLE_MS / 2));
    await chaos.repairAll().catch((e: unknown) => log(`repair: ${(e as Error).message}`));
    await invoiceRound();
    await new Promise((r) => setTimeout(r, SETTLE_MS / 2));
    await check(true);
    const latencies = await chaosLatencies(pool, chaosStarted, chaosEnded, chaos.events);
    const handovers = await handoverFigures(
      pool,
      chaosStarted,
      chaosEnded,
      chaos.implants.map((i) => i.node_id),
    );
    const processFigures = processes.stop();

    const hours = (sizes.at(-1)!.at - sizes[0]!.at) / 3_600_000;
    const byInvariant = Object.fromEntries(
      INVARIANTS.map((name) => {
        const found = [...violations.values()].filter((x) => x.invariant === name);
        return [
          name,
          {
            count: found.length,
            examples: found
              .slice(0, EXAMPLES)
              .map((x) => ({ subject: x.subject, detail: x.detail, seen_at: new Date(x.seen).toISOString() })),
          },
        ];
      }),
    );
    const report = {
      soak: {
        nodes: sim.nodes.length,
        gpus: world.gpus,
        minutes,
        app_processes: topology.apps.length,
        ingest_servers: topology.ingest.length,
        seed,
        database: topology.canRestartDatabase
          ? `embedded PostgreSQL${args["fast-db"] ? " (fsync off)" : ""}`
          : "the server of DATABASE_URL (not restarted)",
        started_at: new Date(runStarted).toISOString(),
        chaos_from: new Date(chaosStarted).toISOString(),
        chaos_to: new Date(chaosEnded).toISOString(),
        wall_s: round((Date.now() - runStarted) / 1000),
        cores: os.cpus().length,
      },
      events_injected: {
        ...Object.fromEntries(CHAOS_KINDS.map((k) => [k, chaos.events.filter((e) => e.kind === k).length])),
        total: chaos.events.length,
        ...(Object.keys(chaos.skipped).length ? { skipped_no_target: chaos.skipped } : {}),
      },
      operator: { nodes_returned_to_service: chaos.repaired(), invoices_issued: invoices },
      workload: workload.stats,
      agents_retried: simErrors,
      background_failures: Object.fromEntries([...backgroundFailures].map(([job, f]) => [job, f.count])),
      exit_reports: {
        accepted: reports.filter((r) => r.outcome === "accepted").length,
        refused_stale: reports.filter((r) => r.outcome === "stale").length,
        refused_other: reports.filter((r) => r.outcome === "refused").length,
      },
      latency_during_chaos: latencies,
      handovers: { ...handovers, tpm: sim.tpmKind },
      processes: processFigures,
      database: {
        size_mb_start: round(sizes[0]!.bytes / 2 ** 20),
        size_mb_end: round(sizes.at(-1)!.bytes / 2 ** 20),
        growth_mb_per_hour: hours > 0 ? round((sizes.at(-1)!.bytes - sizes[0]!.bytes) / 2 ** 20 / hours) : null,
      },
      invariants: { checks: checks, violations: violations.size, by_invariant: byInvariant },
      ok: violations.size === 0,
    };
    writeReport(report);
    return violations.size === 0 ? 0 : 1;
  } finally {
    sim?.stop();
    await pool.end().catch(() => {});
    await topology.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    log(code === 0 ? "no violations" : code === 1 ? "VIOLATIONS found" : "the run failed (see the report)");
    process.exit(code);
  },
  (e: unknown) => {
    log(`the soak failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    console.error(e);
    process.exit(2);
  },
);
