// The soak's deployment: one PostgreSQL, several app processes (the production server, each on its
// own port) and several ingest servers, all on that one database, as production runs them. Every
// process can be killed and started again, and the embedded database restarted, while the fleet
// keeps talking to whatever answers.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureDatabase, freePort, startEmbeddedDatabase, withDatabase, type EmbeddedDatabase } from "../lib/embedded-db";
import { buildIsFresh, nextBuild, startIngestServer, startNext, waitForHealthy, type ServerGroup } from "../lib/next-server";
import { runMigrations } from "../lib/run-migrations";

export interface ManagedServer {
  name: string;
  kind: "app" | "ingest";
  url: string;
  /** the running process's pid (its group's leader), if it runs */
  pid(): number | undefined;
  restarts: number;
  /** exits nobody asked for (each is restarted, as a supervisor would) */
  unexpectedExits: number;
  /** SIGKILL to the whole process group, as a crash would */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface Topology {
  databaseUrl: string;
  /** the embedded server's postmaster parent (our db-server child), when we run the database */
  databasePid(): number | undefined;
  canRestartDatabase: boolean;
  restartDatabase(downMs: number): Promise<void>;
  apps: ManagedServer[];
  ingest: ManagedServer[];
  stop(): Promise<void>;
}

export interface TopologyOptions {
  apps: number;
  ingest: number;
  /** variables every server gets on top of the soak's own (timeouts, caps) */
  env: Record<string, string>;
  /** fsync off: faster on a shared disk; the restart is a clean shutdown, so nothing is lost */
  fastDatabase: boolean;
  log: (m: string) => void;
  /** hears each line a server writes to stderr (its errors), by server name */
  onServerStderr?: (server: string, line: string) => void;
}

function managed(
  name: string,
  kind: ManagedServer["kind"],
  port: number,
  launch: () => ServerGroup,
  log: (m: string) => void,
): ManagedServer {
  let group: ServerGroup | undefined;
  let stopping = false;
  const url = `http://127.0.0.1:${port}`;
  const server: ManagedServer = {
    name,
    kind,
    url,
    restarts: 0,
    unexpectedExits: 0,
    pid: () => (group && group.child.exitCode === null && group.child.signalCode === null ? group.child.pid : undefined),
    async start() {
      stopping = false;
      const started = launch();
      group = started;
      started.child.once("exit", (code, signal) => {
        if (stopping || group !== started) return;
        // nobody asked for this: count it, and bring the process back like a supervisor would
        server.unexpectedExits++;
        log(`${name} exited unexpectedly (${signal ?? code}); restarting it`);
        setTimeout(
          () => !stopping && void server.start().catch((e: unknown) => log(`${name} did not come back: ${(e as Error).message}`)),
          1_000,
        );
      });
      await waitForHealthy(url, 120_000);
    },
    async kill() {
      stopping = true;
      await group?.kill();
      group = undefined;
    },
    async stop() {
      stopping = true;
      await group?.stop();
      group = undefined;
    },
  };
  return server;
}

/**
 * Starts the database (embedded, or a fresh database on the server of DATABASE_URL), migrates it,
 * builds the app when no fresh build exists, and starts the servers. Seeding is the caller's.
 */
export async function startTopology(opts: TopologyOptions): Promise<Topology> {
  const tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-soak-"));
  const external = process.env.DATABASE_URL;
  let database: EmbeddedDatabase | undefined;
  const pgPort = await freePort();
  const dataDir = path.join(tempDir, "pg");
  const startDatabase = async () => {
    database = await startEmbeddedDatabase({ dataDir, port: pgPort, fast: opts.fastDatabase, log: () => {} });
    return database.serverUrl;
  };
  const serverUrl = external ? withDatabase(external, "postgres") : await startDatabase();
  const databaseUrl = await ensureDatabase(serverUrl, `gpuforge_soak_${Date.now().toString(36)}`);
  await runMigrations(databaseUrl);
  opts.log(`database ${external ? "on the server of DATABASE_URL" : "embedded"}, migrated`);

  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env, DATABASE_URL: databaseUrl, NODE_ENV: "production" };
  if (!buildIsFresh()) {
    opts.log("building the production bundle (no fresh build)…");
    nextBuild(env);
  }
  const apps: ManagedServer[] = [];
  for (let i = 1; i <= opts.apps; i++) {
    const port = await freePort();
    apps.push(
      managed(
        `app-${i}`,
        "app",
        port,
        () =>
          startNext({
            port,
            env: { ...env, NEXTAUTH_URL: `http://127.0.0.1:${port}` },
            quiet: true,
            onStderrLine: (l) => opts.onServerStderr?.(`app-${i}`, l),
          }),
        opts.log,
      ),
    );
  }
  const ingest: ManagedServer[] = [];
  for (let i = 1; i <= opts.ingest; i++) {
    const port = await freePort();
    ingest.push(
      managed(
        `ingest-${i}`,
        "ingest",
        port,
        () => startIngestServer({ port, env, quiet: true, onStderrLine: (l) => opts.onServerStderr?.(`ingest-${i}`, l) }),
        opts.log,
      ),
    );
  }
  // one at a time: two cold Next.js starts at once on two cores take longer than one after the other
  for (const s of [...apps, ...ingest]) await s.start();
  opts.log(`${apps.length} app process(es) and ${ingest.length} ingest server(s) up`);

  return {
    databaseUrl,
    databasePid: () => database?.pid(),
    canRestartDatabase: !external,
    async restartDatabase(downMs: number) {
      if (!database) throw new Error("the soak restarts only a database it runs itself");
      await database.stop();
      await new Promise((r) => setTimeout(r, downMs));
      await startDatabase();
    },
    apps,
    ingest,
    async stop() {
      await Promise.all([...apps, ...ingest].map((s) => s.stop()));
      await database?.discard();
      rmSync(tempDir, { recursive: true, force: true });
    },
  };
}
