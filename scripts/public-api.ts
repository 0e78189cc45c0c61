// `npm run public-api`: the read-only public API on plain node:http (PUBLIC_API_PORT, 3002):
// capacity, fleet status and redacted remediations, for customers and status pages. Built from the
// GET-only route table in lib/public-api/routes.ts: every other method answers 405 on every path,
// before anything else happens. It reads through a database role that can SELECT the public_api
// views and nothing else (checked at start), serves no tenant data, and limits each address to
// PUBLIC_API_RATE_PER_MINUTE requests.
import http from "node:http";
import { RateLimiterMemory } from "rate-limiter-flexible";
import type pg from "pg";
import { env, proxyTrust } from "@/lib/env";
import { AppError, methodNotAllowed, rateLimited, validationFailed } from "@/lib/errors";
import { addressScope, clientAddress, withPeerAddress } from "@/lib/http/client-address";
import { errorResponse, zodIssuesToDetails } from "@/lib/http/error-response";
import { sendResponse } from "@/lib/http/node-bridge";
import { logger } from "@/lib/logger";
import { assertReadOnlyRole, provisionReaderLogin, readerPool } from "@/lib/public-api/reader";
import { PUBLIC_ROUTES } from "@/lib/public-api/routes";
import { withDatabaseUrl } from "./lib/database-url";
import { applyServerTimeouts, SERVER_TIMEOUTS, type ServerTimeouts } from "./lib/server-timeouts";

export function createPublicApiServer(reader: pg.Pool, opts: { perMinute?: number; timeouts?: ServerTimeouts } = {}) {
  const limiter = new RateLimiterMemory({ points: opts.perMinute ?? env().PUBLIC_API_RATE_PER_MINUTE, duration: 60 });
  const timeouts = opts.timeouts ?? SERVER_TIMEOUTS;
  const server = http.createServer({ connectionsCheckingInterval: Math.min(1_000, timeouts.headersTimeoutMs) }, async (req, res) => {
    try {
      // by construction: nothing but GET reaches the table, whatever the path or the headers say
      if (req.method !== "GET") {
        res.setHeader("allow", "GET");
        res.setHeader("connection", "close");
        throw methodNotAllowed(req.method ?? "?");
      }
      const address = clientAddress(withPeerAddress(req.headers["x-forwarded-for"], req.socket.remoteAddress), proxyTrust());
      // counted by the address's scope (IPv6: its /64), as every per-address limit is
      await limiter.consume(addressScope(address)).catch((e: unknown) => {
        if (e instanceof Error) throw e;
        throw rateLimited(`More than ${opts.perMinute ?? env().PUBLIC_API_RATE_PER_MINUTE} requests a minute from your address`);
      });
      const url = new URL(req.url ?? "/", "http://public-api.invalid");
      const match = PUBLIC_ROUTES.map((r) => ({ r, m: r.pattern.exec(url.pathname) })).find((x) => x.m);
      if (!match)
        throw new AppError("not_found", `No such resource; the public API serves ${PUBLIC_ROUTES.map((r) => r.contract.path).join(", ")}`);
      const parsed = match.r.contract.query!.safeParse(Object.fromEntries(url.searchParams));
      if (!parsed.success) throw validationFailed(zodIssuesToDetails(parsed.error.issues, "query"));
      const body = await match.r.handle({ reader, query: parsed.data as never, params: match.m!.slice(1) });
      await sendResponse(
        res,
        Response.json(body, {
          headers: { "cache-control": "public, max-age=15", "x-content-type-options": "nosniff", "access-control-allow-origin": "*" },
        }),
      );
    } catch (e) {
      if (res.headersSent) {
        logger.error("public api failed after answering", { error: String(e) });
        return;
      }
      await sendResponse(res, errorResponse(e)).catch(() => res.destroy());
    }
  });
  applyServerTimeouts(server, timeouts);
  return server;
}

async function main() {
  const port = env().PUBLIC_API_PORT;
  const serve = async (url: string) => {
    const reader = readerPool(url);
    await assertReadOnlyRole(reader);
    const server = createPublicApiServer(reader);
    server.listen(port, () => console.log(`[public-api] read-only public API on http://localhost:${port}/v1/status (GET only)`));
    await new Promise<void>((resolve) => {
      const stop = () => server.close(() => void reader.end().then(() => resolve()));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
  };
  const configured = env().PUBLIC_API_DATABASE_URL;
  if (configured) return serve(configured);
  // no role given: the app's database (or the embedded one) gets a login role of the reader group
  await withDatabaseUrl(async (adminUrl) => serve(await provisionReaderLogin(adminUrl)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(`[public-api] not starting: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}
