import { payloadTooLarge, validationFailed } from "@/lib/errors";
import { jsonTextNestsDeeper, NESTING_MESSAGE } from "./json-nesting";

// Bodies a server already holds in memory (the ingest server reads them off the socket): handing
// them over directly spares building a web stream per request, which the profile of small agent
// reports showed as a tenth of the ingest server's CPU.
const bodiesInMemory = new WeakMap<Request, Buffer>();

export function attachBody(request: Request, body: Buffer): void {
  bodiesInMemory.set(request, body);
}

/**
 * Collects a body without ever holding more than `limit` bytes: a missing or lying Content-Length
 * cannot make the server buffer an unbounded stream. Takes a web body or a Node request alike.
 */
export async function readWithinLimit(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  declaredLength: string | null | undefined,
  limit: number,
): Promise<Buffer> {
  const declared = Number(declaredLength ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    throw payloadTooLarge(`Request body is ${declared} bytes; the limit is ${limit}`);
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  // leaving the loop early (the throw) cancels the stream
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > limit) throw payloadTooLarge(`Request body exceeds the limit of ${limit} bytes`);
    parts.push(chunk);
  }
  return parts.length === 1 && Buffer.isBuffer(parts[0]) ? parts[0] : Buffer.concat(parts);
}

/** Reads a body as text within `limit` bytes (see readWithinLimit). */
export async function readTextBody(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  const inMemory = bodiesInMemory.get(request);
  if (inMemory) return (await readWithinLimit([inMemory], declared, limit)).toString("utf8");
  if (!request.body) throw validationFailed([{ path: "body", message: "A JSON request body is required" }]);
  return (await readWithinLimit(request.body as unknown as AsyncIterable<Uint8Array>, declared, limit)).toString("utf8");
}

/**
 * Reads and parses a JSON body within `limit` bytes (see readTextBody), nested no deeper than
 * MAX_JSON_NESTING: every route gets the bound here, before anything walks the value.
 */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const text = await readTextBody(request, limit);
  if (text.trim() === "") throw validationFailed([{ path: "body", message: "A JSON request body is required" }]);
  if (jsonTextNestsDeeper(text)) throw validationFailed([{ path: "body", message: NESTING_MESSAGE }], "JSON nested too deeply");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw validationFailed([{ path: "body", message: `Malformed JSON: ${(e as Error).message}` }], "Malformed JSON");
  }
}
