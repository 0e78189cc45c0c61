import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./database-url";

const nextBin = path.join(repoRoot, "node_modules", "next", "dist", "bin", "next");
const serveScript = path.join(repoRoot, "scripts", "serve.ts");
const SOURCE_DIRS = ["app", "components", "lib", "inngest", "public", "prisma"];
const SOURCE_FILES = ["next.config.ts", "package.json", "proxy.ts", "instrumentation.ts", "postcss.config.mjs", "tsconfig.json"];

/** True when .next holds a production build at least as new as every source file. */
export function buildIsFresh(): boolean {
  const buildId = path.join(repoRoot, ".next", "BUILD_ID");
  if (!existsSync(buildId)) return false;
  const builtAt = statSync(buildId).mtimeMs;
  const newer = (p: string): boolean => {
    const st = statSync(p);
    if (st.isDirectory()) return readdirSync(p).some((f) => f !== "generated" && newer(path.join(p, f)));
    return st.mtimeMs > builtAt;
  };
  return ![...SOURCE_DIRS, ...SOURCE_FILES].map((p) => path.join(repoRoot, p)).some((p) => existsSync(p) && newer(p));
}

export function nextBuild(env: NodeJS.ProcessEnv): void {
  const r = spawnSync(process.execPath, [nextBin, "build"], { cwd: repoRoot, stdio: "inherit", env: { ...env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (r.status !== 0) throw new Error(`next build failed (exit ${r.status})`);
}

/**
 * Starts the app's server (scripts/serve.ts: Next.js, production or dev, behind our own node:http
 * server) in its own process group: killing only the parent could leave a child holding the port,
 * so stop() signals the whole group.
 */
export function startNext(opts: { port: number; dev?: boolean; env: NodeJS.ProcessEnv; quiet?: boolean }) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", serveScript, ...(opts.dev ? ["--dev"] : []), "-p", String(opts.port), "-H", "127.0.0.1"],
    { cwd: repoRoot, detached: true, stdio: opts.quiet ? ["ignore", "ignore", "inherit"] : "inherit", env: { ...opts.env, NEXT_TELEMETRY_DISABLED: "1" } },
  );
  let exited = false;
  child.once("exit", () => (exited = true));
  return {
    child,
    async stop(): Promise<void> {
      if (exited || child.pid === undefined) return;
      const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          /* already gone */
        }
      }, 5_000);
      await done;
      clearTimeout(timer);
    },
  };
}

export async function waitForHealthy(baseUrl: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/api/health`);
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${baseUrl} did not become healthy within ${timeoutMs} ms (${last})`);
}
