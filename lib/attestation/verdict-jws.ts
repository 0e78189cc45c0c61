import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";

// Verdicts as compact JWS (RFC 7515): BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(sig),
// header {alg: "EdDSA", kid, typ}, signed with Ed25519 (RFC 8037). Keys are published as a JWKS
// of OKP keys, each `kid` its RFC 7638 thumbprint, so anyone can check a verdict with the JWKS
// alone (npm run verify-attestation, any JOSE library). Node's crypto signs and verifies Ed25519
// itself and exports JWKs; the few lines of compact serialisation are written here rather than
// adding a JOSE dependency for them.

const VERDICT_TYP = "gpuforge-attestation+jwt";

interface Jwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  use?: "sig";
  alg?: "EdDSA";
}
export interface Jwks {
  keys: Jwk[];
}

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicJwk: Jwk;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

/** The RFC 7638 thumbprint of an Ed25519 public JWK (its required members in lexicographic order). */
function jwkThumbprint(j: { crv: string; kty: string; x: string }): string {
  return createHash("sha256")
    .update(JSON.stringify({ crv: j.crv, kty: j.kty, x: j.x }))
    .digest("base64url");
}

/** An Ed25519 private key (PKCS#8 PEM, or its 32-byte seed) as a signing key with its kid and public JWK. */
export function signingKeyFrom(material: string | Buffer): SigningKey {
  const privateKey =
    Buffer.isBuffer(material) && material.length === 32
      ? createPrivateKey({
          key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), material]),
          format: "der",
          type: "pkcs8",
        })
      : createPrivateKey(material);
  if (privateKey.asymmetricKeyType !== "ed25519")
    throw new Error(`the attestation signing key must be an Ed25519 key, not ${privateKey.asymmetricKeyType}`);
  const pub = createPublicKey(privateKey).export({ format: "jwk" }) as { kty: string; crv: string; x: string };
  const kid = jwkThumbprint(pub);
  return { kid, privateKey, publicJwk: { kty: "OKP", crv: "Ed25519", x: pub.x, kid, use: "sig", alg: "EdDSA" } };
}

/** Signs a payload as a compact JWS with the key. */
export function signJws(payload: unknown, key: SigningKey): string {
  const header = b64url(JSON.stringify({ alg: "EdDSA", kid: key.kid, typ: VERDICT_TYP }));
  const body = b64url(JSON.stringify(payload));
  const sig = sign(null, Buffer.from(`${header}.${body}`), key.privateKey);
  return `${header}.${body}.${b64url(sig)}`;
}

export type JwsCheck =
  | { ok: true; header: { alg: "EdDSA"; kid: string; typ?: string }; payload: unknown }
  | {
      ok: false;
      code: "jws.format.malformed" | "jws.header.invalid" | "jws.key.unknown" | "jws.signature.invalid" | "jws.payload.malformed";
      message: string;
    };

const B64URL = /^[A-Za-z0-9_-]*$/;

/** Verifies a compact JWS against a JWKS: EdDSA only, the key named by its kid, the signature over the first two parts. */
export function verifyJws(jws: string, jwks: Jwks): JwsCheck {
  const parts = jws.trim().split(".");
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p)) || !parts[0] || !parts[2])
    return { ok: false, code: "jws.format.malformed", message: "Not a compact JWS (three base64url parts separated by dots)" };
  let header: { alg?: unknown; kid?: unknown; typ?: unknown; crit?: unknown };
  try {
    header = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8")) as typeof header;
  } catch {
    return { ok: false, code: "jws.format.malformed", message: "The JWS header is not JSON" };
  }
  if (header.alg !== "EdDSA")
    return { ok: false, code: "jws.header.invalid", message: `The JWS algorithm is ${JSON.stringify(header.alg)}; only EdDSA is accepted` };
  if (typeof header.kid !== "string" || !header.kid)
    return { ok: false, code: "jws.header.invalid", message: "The JWS header names no key (kid)" };
  if (header.crit !== undefined)
    return { ok: false, code: "jws.header.invalid", message: "The JWS header has critical extensions this verifier does not implement" };
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk || jwk.kty !== "OKP" || jwk.crv !== "Ed25519")
    return { ok: false, code: "jws.key.unknown", message: `No Ed25519 key ${header.kid} in the key set` };
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" });
  } catch {
    return { ok: false, code: "jws.key.unknown", message: `Key ${header.kid} of the key set cannot be read` };
  }
  const sig = Buffer.from(parts[2]!, "base64url");
  if (sig.length !== 64 || !verify(null, Buffer.from(`${parts[0]}.${parts[1]}`), key, sig))
    return { ok: false, code: "jws.signature.invalid", message: `The signature does not verify with key ${header.kid}` };
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    return { ok: true, header: { alg: "EdDSA", kid: header.kid, ...(typeof header.typ === "string" ? { typ: header.typ } : {}) }, payload };
  } catch {
    return { ok: false, code: "jws.payload.malformed", message: "The signed payload is not JSON" };
  }
}
