// `npm run db:seed`: migrates, then seeds the demo tenants, accounts and clusters (idempotent).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { existsSync, readFileSync } from "node:fs";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { db, disconnectDb } from "@/lib/db/client";
import { seedDemo } from "@/lib/platform/seed-demo";
import { createReservation } from "@/lib/reservations/create-reservation";
import { repoRoot, withDatabaseUrl } from "./lib/database-url";
import { runMigrations } from "./lib/run-migrations";
import { createPolicy } from "@/lib/attestation/create-policy";
import { parseEventLog, replay } from "@/lib/attestation/event-log";
import { referencePolicyFromLog } from "@/lib/attestation/policy";
import { putHandoverSettings } from "@/lib/handover/settings";
import { bootEventLog } from "../agent/src/sim-boot";
import { SIM_DRIVER_VERSION, SIM_VBIOS_VERSION } from "../agent/src/sim-handover";

export const simulatorKeysFile = path.join(repoRoot, ".data", "demo-agent-keys.json");

export async function migrateAndSeed(url: string, demoMode: boolean): Promise<void> {
  await runMigrations(url);
  process.env.DATABASE_URL = url;
  const result = await seedDemo({ demoMode });
  if (result.seeded) {
    await writeKeys(result.agentKeys);
    console.log("[seed] demo tenants, accounts and clusters created");
  } else {
    console.log("[seed] demo data already present");
  }
  if (await seedDemoHandover())
    console.log("[seed] demo clusters wipe and attest their nodes between tenants (policy sim-firmware-baseline)");
  await disconnectDb();
}

/**
 * The demo clusters' handovers: a wipe command (the simulator runs it in simulation) and the
 * attestation policy the simulated firmware's clean boot measures, captured the way an operator
 * captures one from a node it trusts (lib/attestation/policy.ts). Once: a database that has the
 * policy keeps whatever an operator changed since.
 */
async function seedDemoHandover(): Promise<boolean> {
  if (await db().attestationPolicy.findFirst({ where: { name: "sim-firmware-baseline" }, select: { id: true } })) return false;
  const log = parseEventLog(bootEventLog());
  const body = referencePolicyFromLog(log, replay(log), {
    require: ["event_log", "wipe_report", "gpu_reports"],
    gpu: { driver_versions: [SIM_DRIVER_VERSION], vbios_versions: [SIM_VBIOS_VERSION] },
  });
  const policy = await createPolicy(systemActor, {
    name: "sim-firmware-baseline",
    description: "The simulated fleet's clean boot: UEFI with Secure Boot, shim, GRUB, Linux 6.8",
    ...body,
  });
  for (const c of await db().cluster.findMany({ select: { id: true } }))
    await putHandoverSettings(systemActor, c.id, {
      wipe_command: "/usr/local/sbin/gpuforge-wipe --disks nvme0n1,nvme1n1 --secure-erase",
      wipe_timeout_s: 1800,
      attestation: "required",
      attestation_policy_id: policy.id,
      attestation_timeout_s: 600,
    });
  return true;
}

/**
 * Agent keys exist only as hashes in the database, so the demo simulator keeps its own under
 * .data/. When that file is gone (a fresh .data with an old database), new keys are minted.
 */
export async function simulatorKeys(url: string): Promise<Record<string, string>> {
  if (existsSync(simulatorKeysFile)) return JSON.parse(readFileSync(simulatorKeysFile, "utf8")) as Record<string, string>;
  process.env.DATABASE_URL = url;
  const clusters = await db().cluster.findMany({ orderBy: { createdAt: "asc" }, take: 2, select: { id: true } });
  const keys: Record<string, string> = {};
  for (const c of clusters)
    keys[c.id] = (await createApiKey(systemActor, { name: "demo simulator", scope: "agent", cluster_id: c.id })).key;
  await writeKeys(keys);
  await disconnectDb();
  return keys;
}

const tenantKeysFile = path.join(repoRoot, ".data", "demo-tenant-keys.json");

/** Tenant keys the demo workload submits with (minted once, kept under .data/ like the agent keys). */
export async function demoTenantKeys(url: string): Promise<string[]> {
  if (existsSync(tenantKeysFile)) return JSON.parse(readFileSync(tenantKeysFile, "utf8")) as string[];
  process.env.DATABASE_URL = url;
  const tenants = await db().tenant.findMany({ where: { name: { in: ["Acme AI", "Helix Bio"] }, status: "active" }, select: { id: true } });
  const keys: string[] = [];
  for (const t of tenants) keys.push((await createApiKey(systemActor, { name: "demo workload", scope: "tenant", tenant_id: t.id })).key);
  await mkdir(path.dirname(tenantKeysFile), { recursive: true });
  await writeFile(tenantKeysFile, JSON.stringify(keys), { mode: 0o600 });
  await disconnectDb();
  return keys;
}

/**
 * The demo's reservations, once its fleet has registered (the simulator's nodes exist only then):
 * Acme AI holds two H100 nodes for three days from now, Helix Bio books two A100 nodes from the day
 * after tomorrow. Only on a database without any reservation yet; a window the fleet cannot serve
 * (the demo's own jobs still running, say) is skipped and said so.
 */
export async function seedDemoReservations(url: string): Promise<void> {
  process.env.DATABASE_URL = url;
  if ((await db().reservation.count()) > 0) return;
  const hour = 3_600_000;
  const now = Date.now();
  const start = Math.ceil(now / hour) * hour;
  const wanted = [
    { tenant: "Acme AI", gpu_type: "H100", node_count: 2, from: now, to: start + 72 * hour },
    { tenant: "Helix Bio", gpu_type: "A100", node_count: 2, from: start + 48 * hour, to: start + 168 * hour },
  ];
  for (const w of wanted) {
    const tenant = await db().tenant.findFirst({ where: { name: w.tenant }, select: { id: true } });
    if (!tenant) continue;
    // a node is bookable once its first heartbeat made it available (the simulator's first ones are seconds apart)
    for (
      let i = 0;
      i < 30 && (await db().node.count({ where: { status: "available", gpus: { some: { gpuType: w.gpu_type } } } })) < w.node_count * 2;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 1_000));
    }
    try {
      const r = await createReservation(systemActor, {
        tenant_id: tenant.id,
        gpu_type: w.gpu_type,
        node_count: w.node_count,
        starts_at: new Date(w.from).toISOString(),
        ends_at: new Date(w.to).toISOString(),
      });
      console.log(`[seed] ${w.tenant} reserved ${r.nodes.map((n) => n.node.hostname).join(", ")}`);
    } catch (e) {
      console.log(`[seed] no demo reservation for ${w.tenant}: ${(e as Error).message}`);
    }
  }
  await disconnectDb();
}

async function writeKeys(keys: Record<string, string>) {
  await mkdir(path.dirname(simulatorKeysFile), { recursive: true });
  await writeFile(simulatorKeysFile, JSON.stringify(keys, null, 2), { mode: 0o600 });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // the embedded database is the demo's; any other database gets demo accounts only when asked for explicitly
  await withDatabaseUrl((url, embedded) =>
    migrateAndSeed(url, embedded || process.env.DEMO_MODE === "1" || process.env.DEMO_MODE === "true"),
  ).catch((e: unknown) => {
    console.error(`db:seed failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
