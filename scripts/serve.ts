// The app's HTTP server (what `npm start`, `npm run dev` and the test suite run): Next.js behind a
// plain node:http server that does two things Next's own `next start` cannot:
//   - refuses to start when the configuration is unusable (a missing NEXTAUTH_SECRET, say), naming
//     the variable, instead of listening and answering 500 to every request;
//   - appends the socket's address to X-Forwarded-For on every request, so the app can tell the
//     peer it talks to from anything a client wrote in that header (lib/http/client-address).
// Usage: tsx scripts/serve.ts [--dev] -p PORT -H HOST
import http from "node:http";
import path from "node:path";
import next from "next";
import { assertAppServerConfig } from "@/lib/env";
import { withPeerAddress } from "@/lib/http/client-address";
import { markOwnServer } from "@/lib/http/own-server";
import { applyServerTimeouts } from "./lib/server-timeouts";

const repoRoot = path.resolve(import.meta.dirname, "..");
const arg = (flag: string) => {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const dev = process.argv.includes("--dev");
const port = Number(arg("-p") ?? process.env.PORT ?? 3000);
const hostname = arg("-H") ?? "0.0.0.0";

try {
  assertAppServerConfig();
} catch (e) {
  console.error(`[gpuforge] refusing to start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(78); // EX_CONFIG
}

// instrumentation.ts refuses to serve in a process without this mark (a bare `next start`)
markOwnServer();
const app = next({ dev, dir: repoRoot, hostname, port, ...(dev ? { turbopack: true } : {}) });
await app.prepare();
const handle = app.getRequestHandler();
const server = http.createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
  req.headers["x-forwarded-for"] = withPeerAddress(req.headers["x-forwarded-for"], req.socket.remoteAddress);
  void handle(req, res);
});
if (dev) server.on("upgrade", (req, socket, head) => void app.getUpgradeHandler()(req, socket, head));
applyServerTimeouts(server);
server.listen(port, hostname, () => console.log(`[gpuforge] listening on http://${hostname}:${port}${dev ? " (dev)" : ""}`));
const stop = () => server.close(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
// started by a harness with an IPC channel (scripts/lib/next-server.ts): when that parent dies, so does this server
process.on("disconnect", () => process.exit(0));
