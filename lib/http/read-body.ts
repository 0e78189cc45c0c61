import { payloadTooLarge, validationFailed } from "@/lib/errors";

/**
 * Reads a body as text without ever holding more than `limit` bytes: a missing or lying
 * Content-Length cannot make the server buffer an unbounded stream.
 */
export async function readTextBody(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    throw payloadTooLarge(`Request body is ${declared} bytes; the limit is ${limit}`);
  }
  if (!request.body) throw validationFailed([{ path: "body", message: "A JSON request body is required" }]);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw payloadTooLarge(`Request body exceeds the limit of ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads and parses a JSON body within `limit` bytes (see readTextBody). */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const text = await readTextBody(request, limit);
  if (text.trim() === "") throw validationFailed([{ path: "body", message: "A JSON request body is required" }]);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw validationFailed([{ path: "body", message: `Malformed JSON: ${(e as Error).message}` }], "Malformed JSON");
  }
}
