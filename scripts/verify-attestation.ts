// `npm run verify-attestation -- FILE [--jwks FILE|URL] [--node ID]`: checks a saved attestation
// verdict without trusting GPUForge: the compact JWS (RFC 7515, EdDSA/Ed25519) is verified against
// a JWKS (a file, or a URL such as https://status.example.com/v1/attestation/keys), and its verdict
// printed. FILE holds the JWS as downloaded from the console, or a JSON answer that contains one
// ({"attestation": {"jws": …}}). Exits 0 when the signature is valid (whatever the verdict says:
// a valid "fail" is still a genuine verdict), 1 when it is not, 2 on a usage error.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { verifyJws, type Jwks } from "@/lib/attestation/verdict-jws";

function usage(message: string): never {
  console.error(`${message}\nusage: npm run verify-attestation -- FILE [--jwks FILE|URL] [--node NODE_ID]`);
  process.exit(2);
}

/** The JWS a saved file holds: the JWS itself, or a JSON document with one in it. */
export function jwsOf(text: string): string | null {
  const t = text.trim();
  if (/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(t)) return t;
  try {
    const found: string[] = [];
    const walk = (v: unknown) => {
      if (typeof v === "string" && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(v)) found.push(v);
      else if (v && typeof v === "object") Object.values(v).forEach(walk);
    };
    walk(JSON.parse(t));
    return found[0] ?? null;
  } catch {
    return null;
  }
}

async function loadJwks(source: string): Promise<Jwks> {
  const text = /^https?:\/\//.test(source)
    ? await fetch(source, { signal: AbortSignal.timeout(15_000) }).then((r) => {
        if (!r.ok) throw new Error(`${source} answered HTTP ${r.status}`);
        return r.text();
      })
    : readFileSync(source, "utf8");
  const jwks = JSON.parse(text) as Partial<Jwks>;
  if (!Array.isArray(jwks.keys)) throw new Error(`${source} is not a JWKS (no "keys" array)`);
  return jwks as Jwks;
}

async function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { jwks: { type: "string" }, node: { type: "string" } } });
  const file = positionals[0];
  if (!file) usage("no verdict file given");
  const jwks =
    values.jwks ?? (process.env.GPUFORGE_URL ? `${process.env.GPUFORGE_URL.replace(/\/$/, "")}/api/attestation/keys` : undefined);
  if (!jwks) usage("no key set: give --jwks FILE|URL (or set GPUFORGE_URL)");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    usage(`cannot read ${file}: ${(e as Error).message}`);
  }
  const jws = jwsOf(text);
  if (!jws) {
    console.error(`INVALID jws.format.malformed: ${file} holds no compact JWS`);
    process.exit(1);
  }
  const check = verifyJws(jws, await loadJwks(jwks).catch((e: unknown) => usage((e as Error).message)));
  if (!check.ok) {
    console.error(`INVALID ${check.code}: ${check.message}`);
    process.exit(1);
  }
  const v = check.payload as {
    node_id?: string;
    result?: string;
    failures?: Array<{ code: string; message: string }>;
    policy?: string;
    policy_version?: number;
    created_at?: string;
  };
  if (values.node && v.node_id !== values.node) {
    console.error(`INVALID verdict.node.mismatch: the verdict is about node ${v.node_id}, not ${values.node}`);
    process.exit(1);
  }
  console.log(`VALID signature (key ${check.header.kid})`);
  console.log(
    `node ${v.node_id}: ${String(v.result).toUpperCase()} against ${v.policy ?? "no policy"}${v.policy_version ? ` v${v.policy_version}` : ""} at ${v.created_at}`,
  );
  for (const f of v.failures ?? []) console.log(`  ${f.code}: ${f.message}`);
  console.log(JSON.stringify(v, null, 2));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e: unknown) => {
    console.error((e as Error).message);
    process.exit(2);
  });
}
