// A small real HTTP model server: what the simulator runs for every endpoint replica (and tests
// and the gateway benchmark stand up), so the inference gateway, its probes and the SLA work end to
// end without GPUs. OpenAI-style:
//   GET  /health                 200 once the model is "loaded" and while healthy, else 503
//   GET  /v1/models              the one model
//   POST /v1/chat/completions    {messages, stream?}: a completion, or server-sent events (one chunk
//                                a token, then `data: [DONE]`) when stream is true
//   POST /v1/completions         {prompt, stream?}: likewise
// Latency (before the first byte, and between streamed tokens) and an error rate (500s) are
// configurable and can change while it runs. Bodies over 1 MiB are refused.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ModelServerOptions {
  model: string;
  /** the address to listen on (a simulated node's own) */
  host?: string;
  port?: number;
  /** ms before answering: a number, or [min, max] drawn uniformly */
  latencyMs?: number | [number, number];
  /** ms between streamed tokens */
  tokenDelayMs?: number;
  /** share of completion requests answered 500 (0–1) */
  errorRate?: number;
  /** /health answers 503 until then (epoch ms): the model is loading */
  readyAt?: number;
  /** the answer to a prompt (the simulator's plausible plans; an echo by default) */
  complete?: (prompt: string) => string;
  random?: () => number;
}

export interface ModelServer {
  port: number;
  host: string;
  /** completion requests received */
  readonly served: number;
  set(o: Partial<Pick<ModelServerOptions, "latencyMs" | "errorRate" | "tokenDelayMs">> & { healthy?: boolean }): void;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startModelServer(opts: ModelServerOptions): Promise<ModelServer> {
  const cfg = { latencyMs: opts.latencyMs ?? 0, tokenDelayMs: opts.tokenDelayMs ?? 0, errorRate: opts.errorRate ?? 0, healthy: true };
  const random = opts.random ?? Math.random;
  const complete = opts.complete ?? ((p: string) => `echo: ${p}`);
  let served = 0;
  const delay = () =>
    typeof cfg.latencyMs === "number" ? cfg.latencyMs : cfg.latencyMs[0] + random() * (cfg.latencyMs[1] - cfg.latencyMs[0]);

  const server = http.createServer((req, res) => {
    const json = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/health") {
      const up = cfg.healthy && Date.now() >= (opts.readyAt ?? 0);
      return json(up ? 200 : 503, { status: up ? "ok" : Date.now() < (opts.readyAt ?? 0) ? "loading" : "unhealthy" });
    }
    if (req.method === "GET" && path === "/v1/models") return json(200, { object: "list", data: [{ id: opts.model, object: "model" }] });
    const chat = path === "/v1/chat/completions";
    if (req.method !== "POST" || (!chat && path !== "/v1/completions"))
      return json(404, { error: { message: `no route ${req.method} ${path}` } });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on("end", async () => {
      served++;
      let body: { messages?: Array<{ content?: unknown }>; prompt?: unknown; stream?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as typeof body;
      } catch {
        return json(400, { error: { message: "body must be JSON" } });
      }
      await sleep(delay());
      if (random() < cfg.errorRate) return json(500, { error: { message: "simulated model failure" } });
      const prompt = chat ? (body.messages ?? []).map((m) => asText(m.content)).join("\n") : asText(body.prompt);
      const text = complete(prompt);
      const id = `cmpl-sim-${Math.floor(random() * 1e9)}`;
      if (body.stream !== true) {
        return json(200, {
          id,
          object: chat ? "chat.completion" : "text_completion",
          model: opts.model,
          choices: [
            chat
              ? { index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }
              : { index: 0, text, finish_reason: "stop" },
          ],
          usage: { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: Math.ceil(text.length / 4) },
        });
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const tokens = text.match(/\S+\s*/g) ?? [];
      for (const token of tokens) {
        if (res.destroyed) return;
        const delta = chat ? { index: 0, delta: { content: token } } : { index: 0, text: token };
        res.write(
          `data: ${JSON.stringify({ id, object: chat ? "chat.completion.chunk" : "text_completion", model: opts.model, choices: [delta] })}\n\n`,
        );
        if (cfg.tokenDelayMs) await sleep(cfg.tokenDelayMs);
      }
      res.end("data: [DONE]\n\n");
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    host: address.address,
    get served() {
      return served;
    },
    set(o) {
      if (o.latencyMs !== undefined) cfg.latencyMs = o.latencyMs;
      if (o.errorRate !== undefined) cfg.errorRate = o.errorRate;
      if (o.tokenDelayMs !== undefined) cfg.tokenDelayMs = o.tokenDelayMs;
      if (o.healthy !== undefined) cfg.healthy = o.healthy;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A prompt field as text: strings as sent, anything else as its JSON, nothing as empty. */
function asText(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v);
}
