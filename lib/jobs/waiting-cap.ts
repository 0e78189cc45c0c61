import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { rateLimited } from "@/lib/errors";

/**
 * Refuses (429) new work from a tenant that has MAX_WAITING_JOBS_PER_TENANT jobs waiting already:
 * one tenant's backlog stays bounded whatever it submits. Call under the tenant's row lock, so
 * concurrent submits are counted one after another.
 */
export async function assertUnderWaitingCap(tx: Tx, tenantId: string): Promise<void> {
  const cap = env().MAX_WAITING_JOBS_PER_TENANT;
  const [{ waiting }] = await tx.$queryRaw<[{ waiting: number }]>`
    SELECT count(*)::int AS waiting FROM (SELECT 1 FROM jobs WHERE tenant_id = ${tenantId}::uuid AND status IN ('queued', 'blocked') LIMIT ${cap}) x`;
  if (waiting >= cap) {
    throw rateLimited(
      `Your organisation already has ${cap} jobs waiting, the most allowed at once; submit more as they start, or cancel some`,
    );
  }
}
