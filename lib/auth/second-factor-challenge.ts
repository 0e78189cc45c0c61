import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import { authSecret } from "@/lib/env";
import { sameSecret } from "./account-secrets";

// Between the two steps of a two-factor sign-in the browser holds a challenge: proof that this
// user's password was right a moment ago, signed with a key derived from NEXTAUTH_SECRET, so the
// second step never carries or re-checks the password. It names the user and the session version
// it was issued for (a password change in between voids it), whether the place was new to the
// account (for the "new sign-in" mail), and expires after five minutes.

const CHALLENGE_TTL_MS = 5 * 60_000;

export interface Challenge {
  userId: string;
  sessionVersion: number;
  newPlace: boolean;
  expiresAt: number;
}

let key: Buffer | undefined;
const challengeKey = () => (key ??= Buffer.from(hkdfSync("sha256", authSecret(), "gpuforge sign-in", "second-factor challenge v1", 32)));

function mac(body: string): string {
  return createHmac("sha256", challengeKey()).update(body).digest("base64url");
}

export function issueChallenge(c: Omit<Challenge, "expiresAt">, now = Date.now()): string {
  const body = Buffer.from(
    JSON.stringify({
      u: c.userId,
      v: c.sessionVersion,
      p: c.newPlace ? 1 : 0,
      e: now + CHALLENGE_TTL_MS,
      n: randomBytes(8).toString("hex"),
    }),
  ).toString("base64url");
  return `${body}.${mac(body)}`;
}

/** The challenge's content when its signature holds and it has not expired, else null. */
export function readChallenge(token: string, now = Date.now()): Challenge | null {
  const m = /^([A-Za-z0-9_-]{10,400})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m || !sameSecret(mac(m[1]!), m[2]!)) return null;
  try {
    const p = JSON.parse(Buffer.from(m[1]!, "base64url").toString("utf8")) as { u: string; v: number; p: number; e: number };
    if (typeof p.u !== "string" || typeof p.v !== "number" || typeof p.e !== "number" || p.e <= now) return null;
    return { userId: p.u, sessionVersion: p.v, newPlace: p.p === 1, expiresAt: p.e };
  } catch {
    return null;
  }
}
