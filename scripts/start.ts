// `npm start`: runs the product. Without DATABASE_URL it starts an embedded PostgreSQL under
// .data/, migrates it, seeds the demo and serves the app in demo mode on http://localhost:3000.
// With DATABASE_URL it migrates that database and seeds only with --seed (or SEED=1).
// Ctrl-C stops the app and then the embedded database cleanly; the data stays for next time.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { EMBEDDED_DB_NAME, EMBEDDED_PORT, repoRoot } from "./lib/database-url";
import { ensureDatabase, startEmbeddedDatabase, type EmbeddedDatabase } from "./lib/embedded-db";
import { buildIsFresh, nextBuild, startNext, waitForHealthy } from "./lib/next-server";
import { runMigrations } from "./lib/run-migrations";
import { assertAppServerConfig } from "@/lib/env";
import { startDemoWorkload } from "../agent/src/demo-workload";
import { simClusters, startSimulator } from "../agent/src/simulator";
import { demoTenantKeys, migrateAndSeed, seedDemoReservations, simulatorKeys } from "./seed";
import { seedDemoBmcs } from "./seed-bmcs";

const dev = process.argv.includes("--dev");
const port = Number(process.env.PORT ?? 3000);
const env: NodeJS.ProcessEnv = { ...process.env };
let database: EmbeddedDatabase | undefined;
let app: ReturnType<typeof startNext> | undefined;
let simulator: ReturnType<typeof startSimulator> | undefined;
let workload: ReturnType<typeof startDemoWorkload> | undefined;
let stopping = false;

async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  console.log("\n[gpuforge] stopping…");
  workload?.stop();
  simulator?.stop();
  await app?.stop();
  await database?.stop();
  console.log("[gpuforge] stopped");
  process.exit(code);
}
process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

/**
 * 32 random bytes kept under .data/ (created on first start), so the demo's sessions and its stored
 * settings secrets survive restarts and no default secret is ever used.
 */
function localSecret(name: string, encoding: "base64url" | "base64"): string {
  const file = path.join(repoRoot, ".data", name);
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString(encoding), { mode: 0o600 });
  }
  return readFileSync(file, "utf8").trim();
}

/** An Ed25519 private key (PKCS#8 PEM) kept under .data/ as `name`, made on first start: the demo's verdicts and node bundles are signed with keys of its own. */
function localSigningKeyFile(name: string): string {
  const file = path.join(repoRoot, ".data", name);
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
  }
  return file;
}

async function main() {
  const seed = process.argv.includes("--seed") || process.env.SEED === "1";
  if (env.DATABASE_URL) {
    const report = await runMigrations(env.DATABASE_URL);
    console.log(`[db] ${report.applied.length} migration(s) applied`);
    if (seed) await migrateAndSeed(env.DATABASE_URL, env.DEMO_MODE === "1" || env.DEMO_MODE === "true");
  } else {
    console.log("[db] no DATABASE_URL: starting the embedded PostgreSQL under .data/");
    database = await startEmbeddedDatabase({ dataDir: path.join(repoRoot, ".data", "postgres"), port: EMBEDDED_PORT });
    env.DATABASE_URL = await ensureDatabase(database.serverUrl, EMBEDDED_DB_NAME);
    env.DEMO_MODE ??= "1";
    await migrateAndSeed(env.DATABASE_URL, true);
    env.NEXTAUTH_SECRET ??= localSecret("auth-secret", "base64url");
    env.SETTINGS_ENCRYPTION_KEY ??= localSecret("settings-key", "base64");
    // the demo signs its attestation verdicts and its node bundles with keys of its own, made once and kept under .data/
    if (!env.ATTESTATION_SIGNING_KEY) env.ATTESTATION_SIGNING_KEY_FILE ??= localSigningKeyFile("attestation-signing-key.pem");
    if (!env.BUNDLE_SIGNING_KEY) env.BUNDLE_SIGNING_KEY_FILE ??= localSigningKeyFile("bundle-signing-key.pem");
  }
  env.NEXTAUTH_URL ??= `http://localhost:${port}`;
  // the simulated fleet's nodes live on loopback addresses of this machine (127.x.y.z): the demo lets
  // nodes have them, so pods' SSH commands and the inference gateway reach the simulated replicas
  if (database || process.argv.includes("--simulate")) {
    env.NODE_ADDRESS_NETWORKS ??= "127.0.0.0/8";
    // the simulated nodes' listeners take whatever port their machine gives them
    env.AGENT_PUBLISHED_PORTS ??= "1024-65535";
    // …and their simulated BMCs live on loopback too: loopback is refused for BMCs unless listed, so the demo lists it
    env.BMC_NETWORKS ??= "127.0.0.0/8";
  }
  Object.assign(env, { NODE_ENV: dev ? "development" : "production" });
  // the same check the server makes, before minutes go into a build: a missing secret is named now
  assertAppServerConfig(env);

  if (!dev && !buildIsFresh()) {
    console.log("[app] building the production bundle (first start, or sources changed)…");
    nextBuild(env);
  }
  app = startNext({ port, dev, env });
  app.child.once("exit", (code) => void shutdown(code ?? 1));
  await waitForHealthy(`http://127.0.0.1:${port}`, dev ? 180_000 : 90_000);
  // The demo's fleet: simulated agents that speak the same HTTP API a real agent does.
  if ((database || process.argv.includes("--simulate")) && process.env.SIMULATOR !== "0") {
    const keys = await simulatorKeys(env.DATABASE_URL!);
    simulator = startSimulator({
      baseUrl: `http://127.0.0.1:${port}`,
      clusters: simClusters(keys, { pods: 2, racksPerPod: 2, nodesPerRack: 2 }),
      stateDir: path.join(repoRoot, ".data", "simulator"),
      log: (m) => console.log(`[simulator] ${m}`),
      // each simulated node has a Redfish BMC the console can power and provision it through
      ...(process.env.SIM_BMC !== "0" ? { bmc: {} } : {}),
    });
    await simulator.ready;
    if (env.SETTINGS_ENCRYPTION_KEY) {
      const stored = await seedDemoBmcs(env.DATABASE_URL!, env.SETTINGS_ENCRYPTION_KEY, simulator.bmcs());
      if (stored) console.log(`[seed] ${stored} simulated BMC(s) stored`);
    }
    // the demo tenants' reservations need the fleet the simulator just registered
    if (database) await seedDemoReservations(env.DATABASE_URL!);
    // …and the demo tenants submitting work to it, through the same public API
    if (process.env.DEMO_WORKLOAD !== "0") {
      workload = startDemoWorkload({
        baseUrl: `http://127.0.0.1:${port}`,
        tenantKeys: await demoTenantKeys(env.DATABASE_URL!),
        gpuTypes: ["H100", "A100"],
        log: (m) => console.log(`[workload] ${m}`),
      });
    }
  }
  console.log(`\n[gpuforge] ready on http://localhost:${port}${env.DEMO_MODE === "1" ? "  (demo accounts are listed on /login)" : ""}\n`);
}

main().catch(async (e: unknown) => {
  console.error(`[gpuforge] ${e instanceof Error ? e.message : String(e)}`);
  await shutdown(1);
});
