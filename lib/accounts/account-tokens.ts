import "server-only";
import { hashToken, looksLikeLinkToken, newLinkToken } from "@/lib/auth/account-secrets";
import type { Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { validationFailed } from "@/lib/errors";
import { CONSUME_ACCOUNT_TOKEN, RETIRE_ACCOUNT_TOKENS } from "./statements";

import type { TokenPurpose } from "./vocabulary";

/** A new link token for the user: returned once (for the mail), stored only as its hash. */
export async function issueAccountToken(tx: Tx, userId: string, purpose: TokenPurpose, ttlMs: number): Promise<string> {
  const token = newLinkToken();
  await tx.accountToken.create({ data: { userId, purpose, tokenHash: hashToken(token), expiresAt: new Date(Date.now() + ttlMs) } });
  return token;
}

const refused = () =>
  validationFailed([{ path: "token", message: "This link is not valid: it expired, was already used, or was mistyped" }]);

/**
 * Uses a token once: the statement that finds it unused and unexpired marks it used, so two
 * requests with one token cannot both pass. Answers the user it was for, or 400 naming `token`.
 * Several purposes: a token of any of them.
 */
export async function consumeAccountToken(tx: Tx, token: string, purpose: TokenPurpose | TokenPurpose[]): Promise<string> {
  if (!looksLikeLinkToken(token)) throw refused();
  const [row] = await run(tx, CONSUME_ACCOUNT_TOKEN, [hashToken(token), [purpose].flat()]);
  if (!row) throw refused();
  return row.user_id;
}

/**
 * The user an unused, unexpired token is for, without using it (400 naming `token` otherwise):
 * for a link that works only with something else beside it, the token stays usable until that is right.
 */
export async function peekAccountToken(tx: Tx, token: string, purpose: TokenPurpose): Promise<string> {
  if (!looksLikeLinkToken(token)) throw refused();
  const row = await tx.accountToken.findFirst({
    where: { tokenHash: hashToken(token), purpose, usedAt: null, expiresAt: { gt: new Date() } },
    select: { userId: true },
  });
  if (!row) throw refused();
  return row.userId;
}

/** Retires the user's other unused tokens of these purposes (a verified address needs no second link). */
export async function retireAccountTokens(tx: Tx, userId: string, purposes: TokenPurpose[]): Promise<void> {
  await run(tx, RETIRE_ACCOUNT_TOKENS, [userId, purposes]);
}
