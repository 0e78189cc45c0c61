import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/logger";
import { enabledProviders, providerAdapter } from "@/lib/providers/registry";
import { isProviderError, type InstanceReport } from "@/lib/providers/types";
import type { ProviderName } from "@/lib/providers/vocabulary";
import { backOff, providerLabel, raiseAlert, recordAttempt } from "./records";
import { installationId, readInstanceName } from "./installation";
import { terminateInstance } from "./terminate-instance";

/** idle instances get this long past BURST_IDLE_S before the reconciler calls them strays (the cycle ends them first) */
const IDLE_GRACE_S = 300;

/**
 * Nothing rented runs unowned. Every few minutes, per provider: what it reports is compared with
 * what we believe. An instance named as this installation's (gpuforge-<installation>-<id>, or the
 * older gpuforge-<id> where we have that record) that no live row owns — its launch
 * answer was lost, its row ended, or it is idle far past the idle limit — is a stray: terminated,
 * with an alert. A row we believe live that the provider no longer has is over: its work goes back
 * to the queue. A launch whose answer was lost (the row still launching) is adopted by its name.
 * Instances the account holds under other names, another installation's included, are not ours to
 * touch.
 */
export async function reconcileInstances() {
  const out = { providers: 0, strays: 0, adopted: 0, vanished: 0 };
  const e = env();
  for (const provider of enabledProviders(e)) {
    const adapter = providerAdapter(provider, e)!;
    let reported: InstanceReport[];
    try {
      reported = (await adapter.listInstances()).filter((r) => r.state !== "gone");
    } catch (err) {
      if (!isProviderError(err)) throw err;
      logger.warn("reconciler could not list a provider's instances", { provider, error: err.message });
      if (err.kind === "unavailable" || err.kind === "rate_limited") await backOff(provider, err.message, err.retryAfterS);
      continue;
    }
    out.providers++;
    const rows = await db().providerInstance.findMany({
      where: {
        provider,
        OR: [
          { status: { in: ["launching", "booting", "running", "terminating"] } },
          { createdAt: { gt: new Date(Date.now() - 7 * 86_400_000) } },
        ],
      },
    });
    const byExternal = new Map(rows.filter((r) => r.externalId).map((r) => [r.externalId!, r]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const seen = new Set<string>();
    const installation = await installationId();
    for (const r of reported) {
      const name = readInstanceName(r.name, installation);
      // another installation's (sharing the provider account), or no name of ours: not ours to touch
      if (name.kind === "other" && !byExternal.has(r.externalId)) continue;
      // a name from before installations were named is ours only where we have its record (any age)
      const old =
        name.kind === "unnamed" && !byExternal.has(r.externalId) && !byId.has(name.instanceId)
          ? await db().providerInstance.findUnique({ where: { id: name.instanceId } })
          : null;
      if (name.kind === "unnamed" && !byExternal.has(r.externalId) && !byId.has(name.instanceId) && !old) continue;
      const named = name.kind === "other" ? undefined : name.instanceId;
      const row = byExternal.get(r.externalId) ?? (named ? (byId.get(named) ?? old ?? undefined) : undefined);
      if (row) seen.add(row.id);
      if (!row && !named) continue;
      if (row?.status === "launching" && !row.externalId) {
        await db().providerInstance.update({
          where: { id: row.id },
          data: { status: "booting", externalId: r.externalId, launchedAt: new Date() },
        });
        out.adopted++;
        continue;
      }
      const idleTooLong =
        row?.status === "running" &&
        !row.jobId &&
        row.idleSince &&
        Date.now() - row.idleSince.getTime() > (e.BURST_IDLE_S + IDLE_GRACE_S) * 1000;
      const owned = row && ["booting", "running", "terminating"].includes(row.status) && !idleTooLong;
      if (owned) continue;
      const why = !row
        ? "no record of ours owns it"
        : idleTooLong
          ? "it has been idle far past the idle limit"
          : `our record of it is ${row.status}`;
      await strayFound(provider, r, why, row?.id);
      out.strays++;
    }
    for (const row of rows) {
      if (seen.has(row.id) || !["booting", "running"].includes(row.status) || !row.externalId) continue;
      // the provider no longer has it: confirm one by one (a list can be paged or late), then end it here
      const s = await adapter.status(row.externalId).catch(() => null);
      if (!s || (s.state !== "gone" && s.state !== "interrupted")) continue;
      if (row.jobId)
        await recordAttempt({
          jobId: row.jobId,
          tenantId: row.tenantId,
          outcome: "interrupted",
          message: `${providerLabel(provider)} no longer has the instance (${s.providerStatus}); the job goes back to the queue and tries the next offer`,
          provider,
          offerId: row.offerId,
          region: row.region,
          instanceId: row.id,
          priceCentsPerGpuHour: row.priceCentsPerGpuHour,
        });
      await terminateInstance(row.id, `the provider no longer has it (${s.providerStatus})`);
      out.vanished++;
    }
  }
  return out;
}

async function strayFound(provider: ProviderName, r: InstanceReport, why: string, rowId?: string) {
  const adapter = providerAdapter(provider)!;
  let ended = true;
  try {
    if (rowId) ended = (await terminateInstance(rowId, `stray: ${why}`)) === "terminated";
    if (!rowId || ended) await adapter.terminate(r.externalId);
  } catch (e) {
    if (!isProviderError(e)) throw e;
    ended = false;
  }
  await raiseAlert({
    type: "provider_stray_instance",
    key: `${provider}:${r.externalId}`,
    subjectType: "provider",
    subjectId: provider,
    subjectLabel: providerLabel(provider),
    severity: "critical",
    message: `${providerLabel(provider)} instance ${r.externalId} (${r.name ?? "unnamed"}) was running unowned: ${why}. ${ended ? "It was terminated." : "Terminating it failed; the reconciler tries again."}`,
    details: {
      provider,
      external_id: r.externalId,
      name: r.name,
      provider_status: r.providerStatus,
      instance_id: rowId ?? null,
      terminated: ended,
    },
  });
}
