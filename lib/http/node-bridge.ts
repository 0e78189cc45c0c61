import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { NextRequest } from "next/server";

// Serves the app's route handlers from a plain node:http server (the agents' ingest process):
// the same handlers, contracts, auth and errors as under Next, without its router and renderer.

export function toNextRequest(req: IncomingMessage, origin: string): NextRequest {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v !== undefined) headers.set(k, v);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new NextRequest(new URL(req.url ?? "/", origin), {
    method: req.method,
    headers,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
  } as ConstructorParameters<typeof NextRequest>[1]);
}

export async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => (headers[k] = v));
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}
