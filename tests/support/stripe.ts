import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";

/** The webhook secret the e2e app runs with (no STRIPE_SECRET_KEY: invoices use the local payment page). */
export const E2E_STRIPE_WEBHOOK_SECRET = "whsec_e2e_0123456789abcdef0123456789";

// A local server standing in for Stripe where the real one cannot be reached: the API calls the
// SDK makes for Checkout (create, retrieve, expire a session; create a refund), Stripe's hosted
// payment page (a card field and a Pay button), and Stripe's webhooks, signed for real with the
// endpoint's secret (Stripe's own scheme, `t=…,v1=HMAC-SHA256`) and delivered like Stripe delivers
// them (POST, retried while the endpoint answers other than 2xx). Written from Stripe's API
// reference: form-encoded requests with bracketed keys, JSON objects with `object` fields, errors
// as {error: {type, message}}. Test cards as Stripe documents them: 4242… pays, 4000…0002 declines.

export interface StripeStandIn {
  url: string;
  /** every API request: "METHOD /path body" (body decoded) */
  requests: string[];
  /** every event delivered, in order */
  events: Array<{ type: string; id: string; status: number }>;
  sessions: Map<string, Session>;
  /** pays a session as its hosted page would (the webhook is delivered before this resolves) */
  pay(sessionId: string, card?: string): Promise<{ ok: boolean; redirect: string }>;
  /** Stripe expiring an unpaid session */
  expire(sessionId: string): Promise<void>;
  /** an event of any type, signed and delivered (for events the page cannot cause) */
  send(type: string, object: Record<string, unknown>, id?: string): Promise<number>;
  close(): Promise<void>;
}

interface Session {
  id: string;
  object: "checkout.session";
  url: string;
  status: "open" | "complete" | "expired";
  payment_status: "unpaid" | "paid";
  amount_total: number;
  currency: string;
  metadata: Record<string, string>;
  client_reference_id: string | null;
  customer_email: string | null;
  success_url: string;
  cancel_url: string;
  payment_intent: string | null;
  intent_metadata: Record<string, string>;
  mode: string;
  expires_at: number;
}

/** Stripe's form encoding, back to an object: `line_items[0][price_data][unit_amount]=5000`. */
function parseForm(body: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const path = k.replace(/\]/g, "").split("[");
    let at: Record<string, unknown> = out;
    path.forEach((seg, i) => {
      if (i === path.length - 1) at[seg] = v;
      else at = (at[seg] ??= {}) as Record<string, unknown>;
    });
  }
  return out;
}

const rid = (prefix: string) => `${prefix}_test_${randomBytes(12).toString("hex")}`;

export async function startStripeStandIn(opts: {
  webhookSecret: string;
  /** where webhooks go: an endpoint's URL, or a function given the raw body and signature header (integration tests) */
  deliver: string | ((payload: string, signature: string) => Promise<number>);
}): Promise<StripeStandIn> {
  const requests: string[] = [];
  const events: StripeStandIn["events"] = [];
  const sessions = new Map<string, Session>();
  const idempotent = new Map<string, string>();
  const charges = new Map<
    string,
    { id: string; payment_intent: string; amount: number; amount_refunded: number; currency: string; metadata: Record<string, string> }
  >();
  const signer = new Stripe("sk_test_signer");
  let base = "";

  async function send(type: string, object: Record<string, unknown>, id = rid("evt")): Promise<number> {
    const payload = JSON.stringify({
      id,
      object: "event",
      type,
      api_version: "2025-03-31",
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      data: { object },
    });
    let status = 0;
    for (let attempt = 0; attempt < 4; attempt++) {
      const signature = signer.webhooks.generateTestHeaderString({ payload, secret: opts.webhookSecret });
      if (typeof opts.deliver === "string") {
        const res = await fetch(opts.deliver, {
          method: "POST",
          headers: { "content-type": "application/json", "stripe-signature": signature },
          body: payload,
        });
        status = res.status;
        await res.text();
      } else status = await opts.deliver(payload, signature);
      if (status >= 200 && status < 300) break;
      await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
    }
    events.push({ type, id, status });
    return status;
  }

  const view = (s: Session) => {
    const { intent_metadata: _m, ...rest } = s;
    return rest;
  };

  async function pay(sessionId: string, card = "4242424242424242"): Promise<{ ok: boolean; redirect: string }> {
    const s = sessions.get(sessionId);
    if (!s || s.status !== "open") throw new Error(`session ${sessionId} is not open`);
    s.payment_intent ??= rid("pi");
    if (card.replace(/\s/g, "") === "4000000000000002") {
      await send("payment_intent.payment_failed", {
        id: s.payment_intent,
        object: "payment_intent",
        amount: s.amount_total,
        currency: s.currency,
        status: "requires_payment_method",
        metadata: s.intent_metadata,
        last_payment_error: { type: "card_error", code: "card_declined", message: "Your card was declined." },
      });
      return { ok: false, redirect: s.url };
    }
    s.status = "complete";
    s.payment_status = "paid";
    charges.set(s.payment_intent, {
      id: rid("ch"),
      payment_intent: s.payment_intent,
      amount: s.amount_total,
      amount_refunded: 0,
      currency: s.currency,
      metadata: {},
    });
    await send("checkout.session.completed", view(s));
    return { ok: true, redirect: s.success_url };
  }

  async function expire(sessionId: string) {
    const s = sessions.get(sessionId);
    if (!s || s.status !== "open") throw new Error(`session ${sessionId} is not open`);
    s.status = "expired";
    await send("checkout.session.expired", view(s));
  }

  const page = (
    s: Session,
    error?: string,
  ) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pay · Stripe test stand-in</title></head>
<body style="font-family:sans-serif;max-width:420px;margin:40px auto">
<h1>Pay ${(s.amount_total / 100).toFixed(2)} ${s.currency.toUpperCase()}</h1>
${error ? `<p role="alert">${error}</p>` : ""}
<form method="post" action="/c/pay/${s.id}">
<label for="card">Card number</label> <input id="card" name="card" value="4242 4242 4242 4242" autocomplete="cc-number">
<button type="submit">Pay</button></form>
<p><a href="${s.cancel_url}">Cancel</a></p></body></html>`;

  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      void (async () => {
        const url = new URL(req.url ?? "/", base);
        const json = (status: number, value: unknown) =>
          res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
        const fail = (status: number, message: string) => json(status, { error: { type: "invalid_request_error", message } });
        if (url.pathname.startsWith("/v1/")) requests.push(`${req.method} ${url.pathname} ${decodeURIComponent(body)}`);
        let m: RegExpExecArray | null;
        if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") {
          const key = req.headers["idempotency-key"];
          if (typeof key === "string" && idempotent.has(key)) return json(200, view(sessions.get(idempotent.get(key)!)!));
          const f = parseForm(body) as {
            mode?: string;
            metadata?: Record<string, string>;
            client_reference_id?: string;
            customer_email?: string;
            success_url?: string;
            cancel_url?: string;
            payment_intent_data?: { metadata?: Record<string, string> };
            line_items?: Record<string, { quantity?: string; price_data?: { currency?: string; unit_amount?: string } }>;
          };
          const items = Object.values(f.line_items ?? {});
          if (!f.success_url || !items.length) return fail(400, "Missing required param: success_url or line_items.");
          const id = rid("cs");
          const s: Session = {
            id,
            object: "checkout.session",
            url: `${base}/c/pay/${id}`,
            status: "open",
            payment_status: "unpaid",
            amount_total: items.reduce((n, i) => n + Number(i.price_data?.unit_amount ?? 0) * Number(i.quantity ?? 1), 0),
            currency: items[0]!.price_data?.currency ?? "usd",
            metadata: f.metadata ?? {},
            client_reference_id: f.client_reference_id ?? null,
            customer_email: f.customer_email ?? null,
            success_url: f.success_url,
            cancel_url: f.cancel_url ?? f.success_url,
            payment_intent: null,
            intent_metadata: f.payment_intent_data?.metadata ?? {},
            mode: f.mode ?? "payment",
            expires_at: Math.floor(Date.now() / 1000) + 86_400,
          };
          sessions.set(id, s);
          if (typeof key === "string") idempotent.set(key, id);
          return json(200, view(s));
        }
        if ((m = /^\/v1\/checkout\/sessions\/([\w]+)(\/expire)?$/.exec(url.pathname))) {
          const s = sessions.get(m[1]!);
          if (!s) return fail(404, `No such checkout.session: '${m[1]}'`);
          if (m[2] && req.method === "POST") {
            if (s.status !== "open") return fail(400, "Only Checkout Sessions with a status of open can be expired.");
            await expire(s.id);
          }
          return json(200, view(s));
        }
        if (req.method === "POST" && url.pathname === "/v1/refunds") {
          const f = parseForm(body) as { payment_intent?: string; amount?: string };
          const ch = f.payment_intent ? charges.get(f.payment_intent) : undefined;
          if (!ch) return fail(400, "No such payment_intent.");
          const amount = f.amount ? Number(f.amount) : ch.amount - ch.amount_refunded;
          if (amount <= 0 || ch.amount_refunded + amount > ch.amount)
            return fail(400, "Refund amount is greater than the unrefunded amount.");
          ch.amount_refunded += amount;
          const refund = { id: rid("re"), object: "refund", amount, payment_intent: ch.payment_intent, charge: ch.id, status: "succeeded" };
          await send("charge.refunded", {
            id: ch.id,
            object: "charge",
            amount: ch.amount,
            amount_refunded: ch.amount_refunded,
            currency: ch.currency,
            payment_intent: ch.payment_intent,
            refunded: ch.amount_refunded === ch.amount,
            metadata: ch.metadata,
          });
          return json(200, refund);
        }
        if ((m = /^\/c\/pay\/([\w]+)$/.exec(url.pathname))) {
          const s = sessions.get(m[1]!);
          if (!s) return res.writeHead(404).end("No such session");
          if (req.method === "GET") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page(s));
          if (s.status !== "open") return res.writeHead(303, { location: s.success_url }).end();
          const r = await pay(s.id, new URLSearchParams(body).get("card") ?? undefined);
          if (!r.ok) return res.writeHead(402, { "content-type": "text/html; charset=utf-8" }).end(page(s, "Your card was declined."));
          return res.writeHead(303, { location: r.redirect }).end();
        }
        return fail(404, `Unrecognized request URL (${req.method}: ${url.pathname}).`);
      })().catch((e: unknown) => res.writeHead(500).end(String(e)));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, requests, events, sessions, pay, expire, send, close: () => new Promise((r) => server.close(() => r())) };
}
