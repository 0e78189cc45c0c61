import "server-only";
import { readFileSync } from "node:fs";
import { run, type Runner } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { unavailable } from "@/lib/errors";
import { REGISTER_SIGNING_KEY, SIGNING_KEYS } from "./statements";
import { signingKeyFrom, type Jwks, type SigningKey } from "./verdict-jws";

// The key verdicts are signed with: configured (ATTESTATION_SIGNING_KEY, or a file named by
// ATTESTATION_SIGNING_KEY_FILE; npm start keeps one under .data/ for the embedded demo), never
// built in. Its public part is recorded in the database the first time it signs, and the JWKS
// is every key ever recorded: rotating the configured key leaves every earlier verdict verifiable.

let cached: { source: string; key: SigningKey } | undefined;
const registered = new Set<string>();

/** The 32-byte seed of a base64 or hex value, or the value itself (a PEM). */
function material(raw: string): string | Buffer {
  const v = raw.trim();
  if (/^[0-9a-f]{64}$/i.test(v)) return Buffer.from(v, "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(v)) return Buffer.from(v, "base64");
  return v;
}

/** The configured signing key, or null when none is configured. Throws when one is configured but unreadable. */
export function configuredSigningKey(): SigningKey | null {
  const e = env();
  const source = e.ATTESTATION_SIGNING_KEY ? "env" : e.ATTESTATION_SIGNING_KEY_FILE ? `file:${e.ATTESTATION_SIGNING_KEY_FILE}` : null;
  if (!source) return null;
  if (cached?.source === source) return cached.key;
  let raw: string;
  try {
    raw = e.ATTESTATION_SIGNING_KEY ?? readFileSync(e.ATTESTATION_SIGNING_KEY_FILE!, "utf8");
  } catch (err) {
    throw new Error(`ATTESTATION_SIGNING_KEY_FILE cannot be read: ${(err as Error).message}`);
  }
  try {
    cached = { source, key: signingKeyFrom(material(raw)) };
  } catch (err) {
    throw new Error(`The attestation signing key cannot be used: ${(err as Error).message}`);
  }
  return cached.key;
}

/** The signing key, its public part recorded in the key set; 503 unavailable when none is configured. */
export async function signingKeyOrThrow(client: Runner): Promise<SigningKey> {
  const key = configuredSigningKey();
  if (!key)
    throw unavailable(
      "No attestation signing key is configured (ATTESTATION_SIGNING_KEY or ATTESTATION_SIGNING_KEY_FILE): verdicts cannot be signed, so nodes cannot be attested",
    );
  if (!registered.has(key.kid)) {
    await run(client, REGISTER_SIGNING_KEY, [key.kid, JSON.stringify(key.publicJwk)]);
    registered.add(key.kid);
  }
  return key;
}

/** Every key that ever signed a verdict, and the configured one (first) even before it signs. */
export async function verdictJwks(client: Runner): Promise<Jwks> {
  const rows = await run(client, SIGNING_KEYS);
  const current = configuredSigningKey();
  const recorded = rows.map((r) => r.public_jwk as unknown as Jwks["keys"][number]);
  return { keys: [...(current ? [current.publicJwk] : []), ...recorded.filter((k) => k.kid !== current?.kid)] };
}
