import "server-only";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { AGENT_VERSION } from "@/agent/src/version";

// The self-contained agent a node installs: the agent bundled into one file, with the Node.js
// runtime this control plane runs on beside it, so the node needs nothing but the NVIDIA driver and
// a container runtime. Built on first request and kept per agent code (the bundled script's hash, so
// a changed agent is never served from an older build of the same version), Node version and
// architecture, in a directory of the app's own (mode 0700 under .next/cache, never a shared temporary
// directory another local user could fill first), and served from there. The archive is byte for
// byte the same whoever builds it (fixed times, no owners), so app processes building at once agree
// on its checksum.

export interface AgentBundle {
  name: string;
  file: string;
  sha256: string;
  bytes: number;
}

/** The architecture names installers see from `uname -m`, for the one this control plane can serve. */
export const BUNDLE_ARCH = ({ x64: "x86_64", arm64: "aarch64" } as Record<string, string>)[process.arch] ?? process.arch;

/**
 * What a bundle runs: the node agent (one GPU node), or the Slurm bridge (a whole Slurm cluster,
 * from its login or controller node). Both are built, named, checked and installed the same way.
 */
export type BundleKind = "agent" | "slurm-bridge";
const ENTRY: Record<BundleKind, string[]> = { agent: ["main.ts"], "slurm-bridge": ["slurm", "main.ts"] };

const bundleName = (kind: BundleKind = "agent") => `gpuforge-${kind}-${AGENT_VERSION}-linux-${BUNDLE_ARCH}.tar.gz`;

const building = new Map<BundleKind, Promise<AgentBundle>>();

function bundleDir(script: Uint8Array, kind: BundleKind): string {
  const code = createHash("sha256").update(script).digest("hex").slice(0, 16);
  return path.join(
    process.cwd(),
    ".next",
    "cache",
    `gpuforge-${kind}`,
    `${AGENT_VERSION}-${code}-node${process.versions.node}-${process.arch}`,
  );
}

/** The agent (or the bridge) and everything it imports, as one ES module (in memory). */
async function bundleScript(kind: BundleKind): Promise<Uint8Array> {
  const { build: esbuild } = await import("esbuild");
  const out = await esbuild({
    entryPoints: [path.join(process.cwd(), "agent", "src", ...ENTRY[kind])],
    write: false,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // packages written as CommonJS still find require() in an ES module bundle
    banner: { js: `import { createRequire as __gfCreateRequire } from "node:module"; const require = __gfCreateRequire(import.meta.url);` },
    logLevel: "silent",
  });
  return out.outputFiles[0]!.contents;
}

export async function agentBundle(kind: BundleKind = "agent"): Promise<AgentBundle> {
  // a bundle removed since (a cache wipe) is built again rather than served as missing
  const cached = building.get(kind);
  if (cached && !existsSync((await cached.catch(() => ({ file: "" }))).file)) building.delete(kind);
  if (!building.has(kind))
    building.set(
      kind,
      build(kind).catch((e: unknown) => {
        building.delete(kind);
        throw e;
      }),
    );
  return building.get(kind)!;
}

async function build(kind: BundleKind): Promise<AgentBundle> {
  if (process.platform !== "linux")
    throw new Error(`agent bundles are built for Linux nodes; this control plane runs on ${process.platform}`);
  const script = await bundleScript(kind);
  const dir = bundleDir(script, kind);
  const name = bundleName(kind);
  const file = path.join(dir, name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  if (existsSync(file)) return { name, file, sha256: await sha256Of(file), bytes: statSync(file).size };
  const staging = mkdtempSync(path.join(dir, "staging-"));
  try {
    const root = path.join(staging, `gpuforge-${kind}`);
    mkdirSync(path.join(root, "bin"), { recursive: true });
    writeFileSync(path.join(root, `${kind}.mjs`), script);
    copyFileSync(process.execPath, path.join(root, "bin", "node"));
    chmodSync(path.join(root, "bin", "node"), 0o755);
    writeFileSync(path.join(root, "VERSION"), `${AGENT_VERSION}\n`);
    const tar = await import("tar");
    const tmp = path.join(staging, "bundle.tar.gz");
    await tar.create({ gzip: true, file: tmp, cwd: staging, portable: true, mtime: new Date(0) }, [`gpuforge-${kind}`]);
    renameSync(tmp, file);
    return { name, file, sha256: await sha256Of(file), bytes: statSync(file).size };
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
