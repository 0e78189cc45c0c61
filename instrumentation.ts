// Next.js calls register() once when a server process starts: the place to start the
// in-process background driver when no Inngest server is configured.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startBackgroundDriver } = await import("./lib/background/start");
  await startBackgroundDriver();
}
