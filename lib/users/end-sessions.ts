import "server-only";
import { db } from "@/lib/db/client";
import { isUuid } from "@/lib/ids";

/**
 * Ends every session of a user: their session version moves on, and tokens carrying the old one
 * are refused on their next request. `seenVersion` makes a repeated sign-out (a second tab) a no-op.
 */
export async function endSessions(userId: string, seenVersion: number): Promise<void> {
  if (!isUuid(userId)) return;
  await db().user.updateMany({ where: { id: userId, sessionVersion: seenVersion }, data: { sessionVersion: { increment: 1 } } });
}
