import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";

// Which provider instances are this installation's. Every instance is launched as
// gpuforge-<installation>-<instance id>: the reconciler terminates strays of its own installation
// only, so two installations sharing a provider account never end each other's machines. The id is
// GPUFORGE_INSTALLATION_ID when set, else the one generated in this installation's database when it
// was migrated (it lives with the records it protects, embedded default and production alike).

let cached: string | undefined;

export async function installationId(): Promise<string> {
  const configured = env().GPUFORGE_INSTALLATION_ID;
  if (configured) return configured;
  if (cached) return cached;
  const row = await db().installation.findFirst({ orderBy: { installationId: "asc" }, select: { installationId: true } });
  if (!row) throw new Error("the installation has no id: run the migrations");
  cached = row.installationId;
  return cached;
}

/** The name an instance is launched with. */
export const instanceName = (installation: string, instanceId: string) => `gpuforge-${installation}-${instanceId}`;

const NAMED = /^gpuforge-([a-z0-9]{4,16})-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** the name instances had before installations were named: ours only where a record of ours has that id */
const UNNAMED = /^gpuforge-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/**
 * What a provider's instance name says (pure): one of this installation's (with our instance id),
 * another installation's, an older name without an installation (ours only if we have its
 * record), or none of ours at all.
 */
export function readInstanceName(
  name: string | null,
  installation: string,
): { kind: "ours"; instanceId: string } | { kind: "unnamed"; instanceId: string } | { kind: "other" } {
  const named = NAMED.exec(name ?? "");
  if (named) return named[1] === installation ? { kind: "ours", instanceId: named[2]! } : { kind: "other" };
  const old = UNNAMED.exec(name ?? "");
  return old ? { kind: "unnamed", instanceId: old[1]! } : { kind: "other" };
}
