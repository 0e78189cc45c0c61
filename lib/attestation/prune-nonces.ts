import "server-only";
import { pool } from "@/lib/db/client";
import { runCount } from "@/lib/db/statement";
import { PRUNE_NONCES } from "./statements";

/** Nonces that expired more than a day ago can never be used: their rows go (verdicts keep the nonce they answered). */
export async function pruneAttestationNonces(): Promise<{ deleted: number }> {
  return { deleted: await runCount(pool(), PRUNE_NONCES) };
}
