// Next.js calls register() once when a server process starts: the place to start the
// in-process background driver when no Inngest server is configured.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // a server without a usable configuration must not serve (scripts/serve.ts checks first; this
  // covers a plain `next start`)
  const { assertAppServerConfig } = await import("./lib/env");
  assertAppServerConfig();
  const { startBackgroundDriver } = await import("./lib/background/start");
  await startBackgroundDriver();
}
