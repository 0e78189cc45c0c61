import type { IncomingMessage, ServerResponse } from "node:http";
import { NextRequest } from "next/server";
import { payloadTooLarge } from "@/lib/errors";
import { attachBody } from "./read-body";

// Serves the app's route handlers from a plain node:http server (the agents' ingest process):
// the same handlers, contracts, auth and errors as under Next, without its router and renderer.

/**
 * Reads a request body into memory, never more than `limit` bytes (a lying or missing
 * Content-Length included), for toNextRequest to hand over as they are.
 */
export async function readNodeBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw payloadTooLarge(`Request body is ${declared} bytes; the limit is ${limit}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw payloadTooLarge(`Request body exceeds the limit of ${limit} bytes`);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

export function toNextRequest(req: IncomingMessage, origin: string, body: Buffer | null): NextRequest {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v !== undefined) headers.set(k, v);
  }
  const request = new NextRequest(new URL(req.url ?? "/", origin), { method: req.method, headers });
  // handlers read bodies through readJsonBody, which takes these bytes as they are
  if (body !== null) attachBody(request, body);
  return request;
}

export async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => (headers[k] = v));
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}
