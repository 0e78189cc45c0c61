// Next.js calls register() once when a server process starts: the place to start the
// in-process background driver when no Inngest server is configured.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // a server without a usable configuration must not serve (scripts/serve.ts checks first; this
  // covers a plain `next start`)
  const { assertAppServerConfig } = await import("./lib/env");
  const config = assertAppServerConfig();
  // a bare `next start` does not append the socket address to X-Forwarded-For, so a client's own
  // header would choose its rate-limit bucket (lib/http/own-server): in production only the app's
  // own server (`npm start`) may serve: anything but `next dev` (which sets NODE_ENV=development)
  const { servedByOwnServer } = await import("./lib/http/own-server");
  if (!servedByOwnServer()) {
    const why =
      "this process is not the app's own server (scripts/serve.ts): without it a client's X-Forwarded-For would decide its rate-limit buckets. Start it with `npm start`";
    if (config.NODE_ENV !== "development") {
      console.error(`[gpuforge] refusing to start: ${why}`);
      process.exit(78); // EX_CONFIG
    }
    console.warn(`[gpuforge] ${why} (allowed for development only)`);
  }
  const { startBackgroundDriver } = await import("./lib/background/start");
  await startBackgroundDriver();
}
