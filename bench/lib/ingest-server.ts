import { freePort } from "../../scripts/lib/embedded-db";
import { startIngestServer, waitForHealthy } from "../../scripts/lib/next-server";

/** `npm run ingest` on a free port against the benchmark's database, as a deployment runs it beside the app. */
export async function startBenchIngest(databaseUrl: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const server = startIngestServer({
    port,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      DATABASE_POOL_SIZE: "20",
      NEXTAUTH_SECRET: "bench-secret-0123456789abcdef0123456789",
    },
    quiet: true,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthy(url, 20_000);
  } catch (e) {
    await server.kill();
    throw e;
  }
  return { url, stop: () => server.stop() };
}
