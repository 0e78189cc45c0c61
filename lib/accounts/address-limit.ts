import "server-only";
import { pool } from "@/lib/db/client";
import { runOne } from "@/lib/db/statement";
import { rateLimited } from "@/lib/errors";
import { COUNT_IN_WINDOW } from "./statements";

/**
 * `points` requests per `durationS` seconds for one email address and purpose (sign-ups, reset
 * requests), counted in the database: every app process shares the count, so running more
 * instances (or restarting one) gives an address no more mail. One statement, the same work
 * whether or not the address has an account.
 */
export async function consumeAddressLimit(
  purpose: "signup" | "reset",
  email: string,
  points: number,
  durationS: number,
  message: string,
): Promise<void> {
  const row = await runOne(pool(), COUNT_IN_WINDOW, [`email:window/${purpose}/${email.toLowerCase()}`.slice(0, 320), durationS]);
  if ((row?.count ?? 0) > points) throw rateLimited(message);
}
