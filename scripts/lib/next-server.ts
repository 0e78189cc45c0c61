import { spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { repoRoot } from "./database-url";
import { spawnHarness } from "./harness-clients";

const nextBin = path.join(repoRoot, "node_modules", "next", "dist", "bin", "next");
const serveScript = path.join(repoRoot, "scripts", "serve.ts");
const ingestScript = path.join(repoRoot, "scripts", "ingest-server.ts");
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
  const r = spawnSync(process.execPath, [nextBin, "build"], {
    cwd: repoRoot,
    stdio: "inherit",
    env: { ...env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (r.status !== 0) throw new Error(`next build failed (exit ${r.status})`);
}

/**
 * Starts the app's server (scripts/serve.ts: Next.js, production or dev, behind our own node:http
 * server) in its own process group: killing only the parent could leave a child holding the port,
 * so stop() signals the whole group.
 */
export function startNext(opts: {
  port: number;
  dev?: boolean;
  env: NodeJS.ProcessEnv;
  quiet?: boolean;
  onStderrLine?: (line: string) => void;
}) {
  return startServerGroup(
    ["--import", "tsx", serveScript, ...(opts.dev ? ["--dev"] : []), "-p", String(opts.port), "-H", "127.0.0.1"],
    { ...opts.env, NEXT_TELEMETRY_DISABLED: "1" },
    opts.quiet,
    opts.onStderrLine,
  );
}

/** Starts the agents' ingest server (scripts/ingest-server.ts) on `port`, in its own process group like the app. */
export function startIngestServer(opts: { port: number; env: NodeJS.ProcessEnv; quiet?: boolean; onStderrLine?: (line: string) => void }) {
  return startServerGroup(
    ["--import", "tsx", "--conditions=react-server", ingestScript],
    { ...opts.env, INGEST_PORT: String(opts.port) },
    opts.quiet,
    opts.onStderrLine,
  );
}

export type ServerGroup = ReturnType<typeof startServerGroup>;

/** onStderrLine: hears each line the server writes to stderr, which still goes on to ours. */
function startServerGroup(args: string[], env: NodeJS.ProcessEnv, quiet = false, onStderrLine?: (line: string) => void) {
  const stderr = onStderrLine ? "pipe" : "inherit";
  const child: ChildProcess = spawnHarness(path.basename(args.find((a) => a.endsWith(".ts")) ?? "server"), process.execPath, args, {
    cwd: repoRoot,
    detached: true,
    // the IPC channel only tells the server when this process is gone (it exits then): a harness
    // that dies without stopping its servers (a crash, SIGKILL) leaves none behind holding CPU and ports
    stdio: [quiet ? "ignore" : "inherit", quiet ? "ignore" : "inherit", stderr, "ipc"],
    env,
  });
  // the channel alone never keeps this process alive
  child.channel?.unref();
  if (onStderrLine && child.stderr) {
    child.stderr.pipe(process.stderr, { end: false });
    readline.createInterface({ input: child.stderr }).on("line", onStderrLine);
  }
  let exited = false;
  child.once("exit", () => (exited = true));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch {
      /* already gone */
    }
  };
  return {
    child,
    /** SIGTERM to the group, SIGKILL after 5 s; resolves once the server exited. */
    async stop(): Promise<void> {
      if (exited || child.pid === undefined) return;
      const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      signal("SIGTERM");
      const timer = setTimeout(() => signal("SIGKILL"), 5_000);
      await done;
      clearTimeout(timer);
    },
    /** SIGKILL to the whole group at once, as a crash or the OOM killer would; resolves once it is gone. */
    async kill(): Promise<void> {
      if (exited || child.pid === undefined) return;
      const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      signal("SIGKILL");
      await done;
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
