// Workload output on its way to the control plane. Each placement's stdout and stderr are cut into
// sequenced chunks (at line ends, at most MAX_CHUNK_CHARS each), appended to a spool file in the
// state directory, and shipped in order, a bounded batch per placement per flush; the control plane
// stores each (placement, seq) once, so a chunk is re-sent until acknowledged, across restarts. A
// placement whose output outruns the spool's cap loses the excess, with a line saying so. A
// placement the control plane has moved on from (409) or does not know (404) is dropped.
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import { ApiError, type Client } from "./client";

const MAX_CHUNK_CHARS = 8_192;
// the most a request may carry (lib/workload-logs/schemas.ts): a busy job's log costs the control plane half the requests of 100
const CHUNKS_PER_REQUEST = 200;
/** what one request may carry, as JSON (the control plane takes 1 MiB; escaped text can be 6× its characters) */
const BATCH_BYTES = 768 * 1024;
const SPOOL_CAP_BYTES = 64 * 1024 * 1024;
/** a partial line is shipped after this long without its end */
const PARTIAL_LINE_MS = 1_000;

interface Chunk {
  seq: number;
  stream: "stdout" | "stderr";
  text: string;
  at: string;
}

interface Meta {
  key: string;
  path: string;
  attempt: number;
  fence: string;
  acked: number;
  closed: boolean;
  bytes: number;
  capped: boolean;
}

interface Spool {
  meta: Meta;
  chunks: Chunk[];
  nextSeq: number;
  /** chunks per request for this log (halved after a 413) */
  maxChunks: number;
  partial: Record<"stdout" | "stderr", { text: string; since: number }>;
  decoders: Record<"stdout" | "stderr", StringDecoder>;
}

const safeName = (key: string) => key.replace(/[^A-Za-z0-9_.-]/g, "_");

export class LogSpool {
  private spools = new Map<string, Spool>();

  constructor(
    private readonly dir: string,
    private readonly opts: { capBytes?: number; log?: (m: string) => void } = {},
  ) {
    mkdirSync(dir, { recursive: true });
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".json"))) {
      try {
        const meta = JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Meta;
        const lines = readLines(path.join(dir, `${safeName(meta.key)}.jsonl`));
        const chunks = lines.filter((c) => c.seq > meta.acked);
        this.spools.set(meta.key, this.fresh(meta, chunks, (lines.at(-1)?.seq ?? meta.acked) + 1));
      } catch {
        // a half-written spool: what it held is lost, never resent wrongly
      }
    }
  }

  /** Opens a placement's log (idempotent). */
  open(key: string, target: { path: string; attempt: number; fence: string }): void {
    if (this.spools.has(key)) return;
    const meta: Meta = { key, ...target, acked: -1, closed: false, bytes: 0, capped: false };
    this.spools.set(key, this.fresh(meta, [], 0));
    this.saveMeta(meta);
  }

  write(key: string, stream: "stdout" | "stderr", data: Buffer | string): void {
    const s = this.spools.get(key);
    if (!s || s.meta.closed) return;
    // the control plane's database cannot hold NUL; a replacement character shows where one was
    const text = (typeof data === "string" ? data : s.decoders[stream].write(data)).replaceAll("\u0000", "\uFFFD");
    const p = s.partial[stream];
    if (!p.text) p.since = Date.now();
    p.text += text;
    // whole lines go out now; a long line in pieces of MAX_CHUNK_CHARS
    let cut = p.text.lastIndexOf("\n") + 1;
    if (cut === 0 && p.text.length >= MAX_CHUNK_CHARS) cut = MAX_CHUNK_CHARS;
    if (cut > 0) {
      const out = p.text.slice(0, cut);
      p.text = p.text.slice(cut);
      p.since = Date.now();
      for (let i = 0; i < out.length; i += MAX_CHUNK_CHARS) this.append(s, stream, out.slice(i, i + MAX_CHUNK_CHARS));
    }
  }

  /** The workload ended: what is left of its lines goes out, then nothing more is taken. */
  close(key: string): void {
    const s = this.spools.get(key);
    if (!s || s.meta.closed) return;
    for (const stream of ["stdout", "stderr"] as const) {
      const rest = s.partial[stream].text + s.decoders[stream].end();
      s.partial[stream].text = "";
      if (rest) this.append(s, stream, rest);
    }
    s.meta.closed = true;
    this.saveMeta(s.meta);
  }

  pendingChunks(key: string): number {
    return this.spools.get(key)?.chunks.length ?? 0;
  }

  has(key: string): boolean {
    return this.spools.has(key);
  }

  /** Ships one batch per placement, in order; keeps what the control plane has not acknowledged. */
  async flush(client: Client): Promise<{ sent: number }> {
    let sent = 0;
    for (const s of [...this.spools.values()]) {
      for (const stream of ["stdout", "stderr"] as const) {
        const p = s.partial[stream];
        if (p.text && Date.now() - p.since >= PARTIAL_LINE_MS) {
          const text = p.text;
          p.text = "";
          this.append(s, stream, text);
        }
      }
      const batch = this.nextBatch(s);
      if (batch.length === 0) {
        if (s.meta.closed) this.drop(s.meta.key);
        continue;
      }
      try {
        await client.call("POST", s.meta.path, { attempt: s.meta.attempt, fence: s.meta.fence, chunks: batch }, 0);
        s.meta.acked = batch.at(-1)!.seq;
        s.chunks = s.chunks.slice(batch.length);
        sent += batch.length;
        this.saveMeta(s.meta);
        if (s.meta.closed && s.chunks.length === 0) this.drop(s.meta.key);
      } catch (e) {
        if (e instanceof ApiError && e.status === 413) {
          // too large after all (escaping): smaller batches for this log from now on, never a loss
          s.maxChunks = Math.max(1, Math.floor(batch.length / 2));
          continue;
        }
        if (e instanceof ApiError && e.status < 500 && e.status !== 408 && e.status !== 429) {
          this.opts.log?.(
            `log of ${s.meta.key} refused (HTTP ${e.status}): ${e.status === 409 ? "the placement is no longer current" : "dropped"}`,
          );
          this.drop(s.meta.key);
          continue;
        }
        // the control plane did not take it now: keep it, and give the other logs their turn
        continue;
      }
    }
    return { sent };
  }

  /** The chunks to send next: in order, at most CHUNKS_PER_REQUEST (or fewer after a 413) and BATCH_BYTES of JSON. */
  private nextBatch(s: Spool): Chunk[] {
    const out: Chunk[] = [];
    let bytes = 0;
    for (const c of s.chunks) {
      if (out.length >= s.maxChunks) break;
      const size = Buffer.byteLength(JSON.stringify(c), "utf8");
      if (out.length > 0 && bytes + size > BATCH_BYTES) break;
      out.push(c);
      bytes += size;
    }
    return out;
  }

  private fresh(meta: Meta, chunks: Chunk[], nextSeq: number): Spool {
    return {
      meta,
      chunks,
      nextSeq,
      maxChunks: CHUNKS_PER_REQUEST,
      partial: { stdout: { text: "", since: 0 }, stderr: { text: "", since: 0 } },
      decoders: { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") },
    };
  }

  private append(s: Spool, stream: "stdout" | "stderr", text: string): void {
    if (s.meta.capped) return;
    const cap = this.opts.capBytes ?? SPOOL_CAP_BYTES;
    const bytes = Buffer.byteLength(text, "utf8");
    let chunk: Chunk;
    if (s.meta.bytes + bytes > cap) {
      s.meta.capped = true;
      chunk = {
        seq: s.nextSeq++,
        stream: "stderr",
        text: `[gpuforge-agent] output beyond ${Math.round(cap / 1024 / 1024)} MiB waiting on this node was dropped\n`,
        at: new Date().toISOString(),
      };
      this.saveMeta(s.meta);
    } else {
      s.meta.bytes += bytes;
      chunk = { seq: s.nextSeq++, stream, text, at: new Date().toISOString() };
    }
    s.chunks.push(chunk);
    appendFileSync(path.join(this.dir, `${safeName(s.meta.key)}.jsonl`), `${JSON.stringify(chunk)}\n`);
  }

  private saveMeta(meta: Meta): void {
    const file = path.join(this.dir, `${safeName(meta.key)}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(meta));
    renameSync(`${file}.tmp`, file);
  }

  private drop(key: string): void {
    this.spools.delete(key);
    rmSync(path.join(this.dir, `${safeName(key)}.json`), { force: true });
    rmSync(path.join(this.dir, `${safeName(key)}.jsonl`), { force: true });
  }
}

function readLines(file: string): Chunk[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Chunk];
        } catch {
          return []; // a line cut by a crash
        }
      });
  } catch {
    return [];
  }
}
