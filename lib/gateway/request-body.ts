import { payloadTooLarge } from "@/lib/errors";

// A tenant's request body on its way to a replica. The gateway reads at most RESENDABLE_BYTES of it
// before it picks a replica: a body that ends within them (a chat completion's few kilobytes) is
// held whole, so a replica that refuses the connection or answers 502–504 can be tried again with
// it; a longer one is streamed to the replica as the client sends it, never held (a thousand
// 10 MiB uploads in flight would otherwise be 10 GiB in one process), and counted against
// GATEWAY_MAX_BODY_BYTES as it passes. A streamed body can be sent once: a retry is possible only
// while none of it went past what was held.

/** The most of a body the gateway holds in memory to be able to send it twice. */
const RESENDABLE_BYTES = 64 * 1024;

export class StreamedBody {
  /** whether any byte after the held prefix was taken from the client (the body can no longer be resent) */
  consumed = false;
  private sent = 0;

  constructor(
    readonly prefix: Buffer,
    private readonly rest: AsyncIterator<Uint8Array>,
    readonly declaredLength: number | null,
    private readonly limit: number,
  ) {}

  /** The body's chunks, the held prefix first; throws payload_too_large once more than the limit has passed. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    this.sent = this.prefix.length;
    if (this.prefix.length) yield this.prefix;
    for (;;) {
      this.consumed = true;
      const { done, value } = await this.rest.next();
      if (done) return;
      this.sent += value.byteLength;
      if (this.sent > this.limit) throw payloadTooLarge(`Request body exceeds the limit of ${this.limit} bytes`);
      yield value;
    }
  }

  /** Stops reading the client (it is not forwarded any further). */
  cancel(): void {
    void this.rest.return?.().catch(() => {});
  }
}

export type RequestBody = Buffer | StreamedBody;

/**
 * Reads the start of a body: the whole of it when it ends within RESENDABLE_BYTES, otherwise what
 * was read so far and the rest still unread. A declared length over the limit is refused before
 * anything is read.
 */
export async function takeRequestBody(
  source: AsyncIterable<Uint8Array>,
  declaredLength: string | null | undefined,
  limit: number,
  resendable = RESENDABLE_BYTES,
): Promise<RequestBody> {
  const declared = declaredLength != null && /^\d+$/.test(declaredLength) ? Number(declaredLength) : null;
  if (declared !== null && declared > limit) throw payloadTooLarge(`Request body is ${declared} bytes; the limit is ${limit}`);
  const it = source[Symbol.asyncIterator]();
  const parts: Uint8Array[] = [];
  let size = 0;
  while (size <= Math.min(resendable, limit)) {
    const { done, value } = await it.next();
    if (done) return parts.length === 1 && Buffer.isBuffer(parts[0]) ? parts[0] : Buffer.concat(parts);
    size += value.byteLength;
    if (size > limit) {
      void it.return?.().catch(() => {});
      throw payloadTooLarge(`Request body exceeds the limit of ${limit} bytes`);
    }
    parts.push(value);
  }
  return new StreamedBody(Buffer.concat(parts), it, declared, limit);
}
