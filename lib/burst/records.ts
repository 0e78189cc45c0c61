import "server-only";
import { enqueueNotifications } from "@/lib/alerts/notification-outbox";
import { db, pool } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { PROVIDER_LABELS, type AttemptOutcome, type ProviderName } from "@/lib/providers/vocabulary";
import { backoffSeconds } from "./policy";
import { RAISE_BURST_ALERT, RESOLVE_BURST_ALERT } from "./statements";

// What the burst policy writes besides instances: each attempt (burst_attempts, and the same in
// words on the job's timeline), alerts, provider backoff, and the provider clusters nodes join.

const BURST_ACTOR = "burst";

export const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export async function recordAttempt(a: {
  jobId: string;
  tenantId: string;
  outcome: AttemptOutcome;
  message: string;
  provider?: ProviderName;
  offerId?: string;
  region?: string;
  instanceId?: string;
  priceCentsPerGpuHour?: number;
}): Promise<void> {
  await db().$transaction([
    db().burstAttempt.create({
      data: {
        jobId: a.jobId,
        tenantId: a.tenantId,
        outcome: a.outcome,
        message: a.message,
        provider: a.provider ?? null,
        offerId: a.offerId ?? null,
        region: a.region ?? null,
        instanceId: a.instanceId ?? null,
        priceCentsPerGpuHour: a.priceCentsPerGpuHour ?? null,
      },
    }),
    // the job's own timeline says it in words (the job stays where it was: queued, or running)
    db().$executeRaw`INSERT INTO job_events (job_id, from_status, to_status, reason, actor)
                     SELECT id, status, status, ${`burst: ${a.message}`}, ${BURST_ACTOR} FROM jobs WHERE id = ${a.jobId}::uuid`,
  ]);
}

/** The last attempt of this outcome for the job, so quiet outcomes (no offer, cap) are written once in a while, not every cycle. */
export async function lastAttemptAt(jobId: string, outcome: AttemptOutcome): Promise<Date | null> {
  const a = await db().burstAttempt.findFirst({ where: { jobId, outcome }, orderBy: { id: "desc" }, select: { createdAt: true } });
  return a?.createdAt ?? null;
}

export async function raiseAlert(a: {
  type: "burst_spend_cap" | "provider_stray_instance" | "burst_failed";
  key: string;
  subjectType: "tenant" | "provider" | "job" | "node";
  subjectId: string;
  subjectLabel: string;
  tenantId?: string | null;
  clusterId?: string | null;
  nodeId?: string | null;
  severity: "warning" | "critical";
  message: string;
  details: Record<string, unknown>;
}): Promise<void> {
  const row = await runOne(pool(), RAISE_BURST_ALERT, [
    a.type,
    `${a.type}:${a.key}`,
    a.subjectType,
    a.subjectId,
    a.subjectLabel,
    a.tenantId ?? null,
    a.clusterId ?? null,
    a.nodeId ?? null,
    a.severity,
    a.message,
    JSON.stringify(a.details),
  ]);
  if (row?.inserted) await enqueueNotifications([row.id], "firing");
}

export async function resolveAlert(type: string, key: string): Promise<void> {
  const rows = await run(pool(), RESOLVE_BURST_ALERT, [`${type}:${key}`]);
  if (rows.length)
    await enqueueNotifications(
      rows.map((r) => r.id),
      "resolved",
    );
}

/** Providers in backoff now, with when each may be asked again. */
export async function backoffs(): Promise<Map<ProviderName, number>> {
  const rows = await db().providerBackoff.findMany({ where: { until: { gt: new Date() } }, select: { provider: true, until: true } });
  return new Map(rows.map((r) => [r.provider as ProviderName, r.until.getTime()]));
}

/** One more failure in a row: the provider is left alone for longer (doubling), at least as long as it asked. */
export async function backOff(provider: ProviderName, error: string, retryAfterS?: number): Promise<Date> {
  const e = env();
  const prev = await db().providerBackoff.findUnique({ where: { provider }, select: { failures: true } });
  const failures = (prev?.failures ?? 0) + 1;
  const until = new Date(Date.now() + backoffSeconds(failures, e.BURST_BACKOFF_S, e.BURST_BACKOFF_MAX_S, retryAfterS) * 1000);
  await db().providerBackoff.upsert({
    where: { provider },
    create: { provider, failures, until, lastError: error.slice(0, 500) },
    update: { failures, until, lastError: error.slice(0, 500), updatedAt: new Date() },
  });
  return until;
}

export async function clearBackoff(provider: ProviderName): Promise<void> {
  await db().providerBackoff.deleteMany({ where: { provider } });
}

/** The provider cluster nodes of one provider and region join (made on first use, named burst-<provider>-<region>). */
export async function providerCluster(provider: ProviderName, region: string): Promise<string> {
  const name = `burst-${provider}-${region
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")}`.slice(0, 100);
  // one statement: two cycles making the same cluster at once both get its id (Prisma's upsert is two)
  const rows = await db().$queryRaw<Array<{ id: string }>>`
    INSERT INTO clusters (name, provider, region) VALUES (${name}, ${provider}, ${region})
    ON CONFLICT (name) DO UPDATE SET provider = EXCLUDED.provider RETURNING id::text`;
  return rows[0]!.id;
}

export const providerLabel = (p: ProviderName) => PROVIDER_LABELS[p];
