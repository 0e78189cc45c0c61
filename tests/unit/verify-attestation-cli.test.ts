import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { signingKeyFrom, signJws } from "@/lib/attestation/verdict-jws";
import { jwsOf } from "../../scripts/verify-attestation";
import { tempDir } from "../support/temp-dir";

// `npm run verify-attestation`: a saved verdict checked offline against a JWKS file or URL, the
// way a tenant checks one without trusting GPUForge. Keys rotate: a verdict signed by a key that is
// no longer the current one still verifies while the key set lists it.

const NODE = "0f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f";
const oldKey = signingKeyFrom(Buffer.alloc(32, 1));
const newKey = signingKeyFrom(Buffer.alloc(32, 2));
const verdict = (key = oldKey) =>
  signJws(
    {
      iss: "gpuforge",
      node_id: NODE,
      result: "fail",
      failures: [{ code: "policy.pcr.mismatch", message: "PCR 4 differs" }],
      policy: "golden",
      policy_version: 3,
      created_at: "2026-12-01T12:00:00.000Z",
    },
    key,
  );

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/verify-attestation.ts", ...args], {
    encoding: "utf8",
    timeout: 60_000,
    cwd: path.resolve(import.meta.dirname, "../.."),
  });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe("verify-attestation", () => {
  const dir = tempDir("verify-cli-");
  const jwksFile = path.join(dir, "jwks.json");
  writeFileSync(jwksFile, JSON.stringify({ keys: [newKey.publicJwk, oldKey.publicJwk] }));

  it("accepts a verdict signed by a rotated-out key the key set still lists, and prints its verdict", () => {
    const file = path.join(dir, "old.jws");
    writeFileSync(file, verdict(oldKey));
    const r = cli(file, "--jwks", jwksFile, "--node", NODE);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain(`VALID signature (key ${oldKey.kid})`);
    expect(r.out).toContain("FAIL against golden v3");
    expect(r.out).toContain("policy.pcr.mismatch: PCR 4 differs");
  });

  it("refuses a flipped byte in the signature, a key the set does not list, and a verdict about another node", () => {
    const [h, p, s] = verdict().split(".");
    const sig = Buffer.from(s!, "base64url");
    sig[5]! ^= 0x01;
    const flipped = path.join(dir, "flipped.jws");
    writeFileSync(flipped, `${h}.${p}.${sig.toString("base64url")}`);
    expect(cli(flipped, "--jwks", jwksFile)).toMatchObject({ status: 1, out: expect.stringContaining("INVALID jws.signature.invalid") });
    const stranger = path.join(dir, "stranger.jws");
    writeFileSync(stranger, verdict(signingKeyFrom(Buffer.alloc(32, 3))));
    expect(cli(stranger, "--jwks", jwksFile)).toMatchObject({ status: 1, out: expect.stringContaining("INVALID jws.key.unknown") });
    const good = path.join(dir, "good.jws");
    writeFileSync(good, verdict());
    expect(cli(good, "--jwks", jwksFile, "--node", "another")).toMatchObject({
      status: 1,
      out: expect.stringContaining("verdict.node.mismatch"),
    });
    expect(cli()).toMatchObject({ status: 2 });
  });

  it("reads the key set from a URL, and a verdict saved as the API's JSON answer", async () => {
    const server = http.createServer((_req, res) => res.end(JSON.stringify({ keys: [newKey.publicJwk] })));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const file = path.join(dir, "answer.json");
      writeFileSync(file, JSON.stringify({ attestation: { id: "x", result: "pass", jws: verdict(newKey) } }));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/attestation/keys`;
      // the key set is served by this process: the CLI runs beside it, not blocking it
      const r = await new Promise<{ status: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", "scripts/verify-attestation.ts", file, "--jwks", url], {
          cwd: path.resolve(import.meta.dirname, "../.."),
        });
        let out = "";
        child.stdout.on("data", (b: Buffer) => (out += b.toString()));
        child.stderr.on("data", (b: Buffer) => (out += b.toString()));
        child.on("close", (status) => resolve({ status, out }));
      });
      expect(r.status, r.out).toBe(0);
    } finally {
      server.close();
    }
  });

  it("finds the JWS in what a file holds", () => {
    const jws = verdict();
    expect(jwsOf(`  ${jws}\n`)).toBe(jws);
    expect(jwsOf(JSON.stringify({ data: [{ jws }] }))).toBe(jws);
    expect(jwsOf("not a verdict")).toBeNull();
  });
});
