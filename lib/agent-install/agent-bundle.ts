import "server-only";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AGENT_VERSION } from "@/agent/src/version";

// The self-contained agent a node installs: the agent bundled into one file, with the Node.js
// runtime this control plane runs on beside it, so the node needs nothing but the NVIDIA driver and
// a container runtime. Built once per agent version, Node version and architecture, on first request,
// into the temporary directory, and served from there.

export interface AgentBundle {
  name: string;
  file: string;
  sha256: string;
  bytes: number;
}

/** The architecture names installers see from `uname -m`, for the one this control plane can serve. */
export const BUNDLE_ARCH = ({ x64: "x86_64", arm64: "aarch64" } as Record<string, string>)[process.arch] ?? process.arch;

export const bundleName = () => `gpuforge-agent-${AGENT_VERSION}-linux-${BUNDLE_ARCH}.tar.gz`;

let building: Promise<AgentBundle> | undefined;

export function agentBundle(): Promise<AgentBundle> {
  building ??= build().catch((e: unknown) => {
    building = undefined;
    throw e;
  });
  return building;
}

async function build(): Promise<AgentBundle> {
  if (process.platform !== "linux") throw new Error(`agent bundles are built for Linux nodes; this control plane runs on ${process.platform}`);
  const dir = path.join(os.tmpdir(), `gpuforge-agent-bundle-${AGENT_VERSION}-node${process.versions.node}-${process.arch}`);
  const file = path.join(dir, bundleName());
  const shaFile = `${file}.sha256`;
  if (existsSync(file) && existsSync(shaFile)) return { name: bundleName(), file, sha256: readFileSync(shaFile, "utf8").trim(), bytes: statSync(file).size };
  mkdirSync(dir, { recursive: true });
  const staging = mkdtempSync(path.join(dir, "staging-"));
  try {
    const root = path.join(staging, "gpuforge-agent");
    mkdirSync(path.join(root, "bin"), { recursive: true });
    const { build: esbuild } = await import("esbuild");
    await esbuild({
      entryPoints: [path.join(process.cwd(), "agent", "src", "main.ts")],
      outfile: path.join(root, "agent.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      // packages written as CommonJS still find require() in an ES module bundle
      banner: { js: `import { createRequire as __gfCreateRequire } from "node:module"; const require = __gfCreateRequire(import.meta.url);` },
      logLevel: "silent",
    });
    copyFileSync(process.execPath, path.join(root, "bin", "node"));
    chmodSync(path.join(root, "bin", "node"), 0o755);
    writeFileSync(path.join(root, "VERSION"), `${AGENT_VERSION}\n`);
    const tar = await import("tar");
    const tmp = path.join(staging, "bundle.tar.gz");
    await tar.create({ gzip: true, file: tmp, cwd: staging, portable: true }, ["gpuforge-agent"]);
    const sha256 = await sha256Of(tmp);
    renameSync(tmp, file);
    writeFileSync(shaFile, `${sha256}\n`);
    return { name: bundleName(), file, sha256, bytes: statSync(file).size };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function sha256Of(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(file)
      .on("data", (d) => h.update(d))
      .on("end", () => resolve(h.digest("hex")))
      .on("error", reject);
  });
}
