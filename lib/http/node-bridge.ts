import type { IncomingMessage, ServerResponse } from "node:http";
import { NextRequest } from "next/server";
import { attachBody } from "./read-body";

// Serves the app's route handlers from a plain node:http server (the agents' ingest process):
// the same handlers, contracts, auth and errors as under Next, without its router and renderer.

/** `body`: the bytes already read off the socket (readWithinLimit), handed to readJsonBody as they are. */
export function toNextRequest(req: IncomingMessage, origin: string, body: Buffer | null): NextRequest {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v !== undefined) headers.set(k, v);
  }
  const request = new NextRequest(new URL(req.url ?? "/", origin), { method: req.method, headers });
  if (body !== null) attachBody(request, body);
  return request;
}

export async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => (headers[k] = v));
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}
