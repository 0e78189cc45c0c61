import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCardDeposit, listCardDeposits } from "@/lib/billing/card-deposits";
import { balanceOf } from "@/lib/billing/ledger";
import { handleStripeWebhook } from "@/lib/billing/stripe-webhook";
import { systemActor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { HTTP_STATUS, isAppError } from "@/lib/errors";
import { createTenant } from "@/lib/tenants/create-tenant";
import { actorFor, makeUser, operatorPrincipal, tenantAdminPrincipal, tenantMemberPrincipal, unique } from "../support/fixtures";
import { codeAndFieldOf, codeOf } from "../support/outcomes";
import { startStripeStandIn, type StripeStandIn } from "../support/stripe";

// Card deposits end to end through the services: a tenant admin opens Stripe Checkout (against the
// local stand-in for Stripe's API, tests/support/stripe.ts), the payer pays on its hosted page,
// and the stand-in delivers Stripe's webhooks signed for real. The ledger is credited exactly once
// whatever arrives how often and in what order; what does not match the deposit changes nothing.

const secret = `whsec_${unique("deposits")}`;
let stripe: StripeStandIn;
let cfg: { secretKey: string; webhookSecret: string; apiBase: string };
const operator = actorFor(operatorPrincipal);

beforeAll(async () => {
  stripe = await startStripeStandIn({
    webhookSecret: secret,
    deliver: async (payload, signature) => {
      try {
        await handleStripeWebhook(payload, signature, { webhookSecret: secret });
        return 200;
      } catch (e) {
        return isAppError(e) ? HTTP_STATUS[e.code] : 500;
      }
    },
  });
  cfg = { secretKey: "sk_test_standin", webhookSecret: secret, apiBase: stripe.url };
});
afterAll(() => stripe.close());

async function prepaidTenant() {
  const tenant = await createTenant(systemActor, {
    name: unique("prepaid"),
    gpu_quota: 8,
    billing_email: `${unique("bill")}@example.test`,
    billing_mode: "prepaid",
  });
  const admin = await makeUser("tenant_admin", tenant.id);
  return { tenant, admin, asAdmin: actorFor({ ...tenantAdminPrincipal(tenant.id, admin.id), label: admin.email }) };
}

const ledger = (tenantId: string) => db().ledgerEntry.findMany({ where: { tenantId }, orderBy: { id: "asc" } });

describe("opening a card deposit", () => {
  it("records the deposit, then opens Checkout for exactly its amount with our ids in the metadata", async () => {
    const t = await prepaidTenant();
    const s = await startCardDeposit(t.asAdmin, t.tenant.id, 5000, cfg);
    expect(s.url).toBe(`${stripe.url}/c/pay/${s.session_id}`);
    const sent = stripe.requests.filter((r) => r.startsWith("POST /v1/checkout/sessions ")).at(-1)!;
    expect(sent).toContain(`metadata[deposit_id]=${s.id}`);
    expect(sent).toContain(`metadata[tenant_id]=${t.tenant.id}`);
    expect(sent).toContain(`payment_intent_data[metadata][deposit_id]=${s.id}`);
    expect(sent).toContain("unit_amount]=5000");
    expect(sent).toContain("currency]=usd");
    const row = await db().cardDeposit.findUniqueOrThrow({ where: { id: s.id } });
    expect(row).toMatchObject({ tenantId: t.tenant.id, amountCents: 5000n, status: "open", stripeSessionId: s.session_id });
    expect(await balanceOf(t.tenant.id)).toBe(0); // nothing until Stripe says it is paid
    const listed = await listCardDeposits(t.asAdmin.principal, t.tenant.id, { limit: 10 });
    expect(listed.data.map((d) => [d.id, d.status])).toEqual([[s.id, "open"]]);
  });

  it("refuses members, other tenants, amounts outside the limits, unverified sign-ups, and says when Stripe is not set up", async () => {
    const t = await prepaidTenant();
    const other = await prepaidTenant();
    expect(await codeOf(startCardDeposit(actorFor(tenantMemberPrincipal(t.tenant.id)), t.tenant.id, 5000, cfg))).toBe("forbidden");
    expect(await codeOf(startCardDeposit(other.asAdmin, t.tenant.id, 5000, cfg))).toBe("not_found");
    expect(await codeAndFieldOf(startCardDeposit(t.asAdmin, t.tenant.id, 999, cfg))).toBe("validation_failed:amount_cents");
    expect(await codeAndFieldOf(startCardDeposit(t.asAdmin, t.tenant.id, 1_000_001, cfg))).toBe("validation_failed:amount_cents");
    expect(await codeAndFieldOf(startCardDeposit(t.asAdmin, t.tenant.id, 5000, {}))).toBe("conflict:amount_cents");
    expect(await codeOf(startCardDeposit(t.asAdmin, t.tenant.id, 5000, { secretKey: "sk_test_x", apiBase: stripe.url }))).toBe("conflict");
    await db().tenant.update({ where: { id: t.tenant.id }, data: { origin: "signup", signupExpiresAt: new Date(Date.now() + 3_600_000) } });
    expect(await codeOf(startCardDeposit(t.asAdmin, t.tenant.id, 5000, cfg))).toBe("forbidden");
    // an operator may open one for a tenant
    expect(await codeOf(startCardDeposit(operator, other.tenant.id, 5000, cfg))).toBe("ok");
    expect(await db().cardDeposit.count({ where: { tenantId: t.tenant.id } })).toBe(0);
  });
});

describe("Stripe's webhooks for a deposit", () => {
  it("a paid session credits the ledger once, with a receipt in the ledger and by mail", async () => {
    const t = await prepaidTenant();
    const s = await startCardDeposit(t.asAdmin, t.tenant.id, 2500, cfg);
    const paid = await stripe.pay(s.session_id);
    expect(paid).toEqual({ ok: true, redirect: expect.stringContaining(`deposit=${s.id}`) });
    expect(stripe.events.at(-1)).toMatchObject({ type: "checkout.session.completed", status: 200 });
    expect(await balanceOf(t.tenant.id)).toBe(2500);
    const entries = await ledger(t.tenant.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: "deposit", amountCents: 2500n, cardDepositId: s.id, createdBy: "stripe webhook" });
    expect(entries[0]!.description).toMatch(/^Card deposit DEP-[0-9A-F]{8} through Stripe Checkout$/);
    expect(await db().cardDeposit.findUniqueOrThrow({ where: { id: s.id } })).toMatchObject({
      status: "paid",
      stripePaymentIntent: expect.stringMatching(/^pi_/),
    });
    const receipts = await db().notification.findMany({ where: { kind: "account", mailKind: "deposit_receipt", tenantId: t.tenant.id } });
    expect(new Set(receipts.map((r) => r.target))).toEqual(new Set([t.tenant.billingEmail, t.admin.email]));
    expect(receipts).toHaveLength(2);
    expect(receipts[0]!.body).toContain("$25.00 was added to your prepaid balance");
    expect(receipts[0]!.body).toContain("Your balance is now $25.00");
  });

  it("replays, a second event for the same payment, and parallel deliveries change nothing more", async () => {
    const t = await prepaidTenant();
    const s = await startCardDeposit(t.asAdmin, t.tenant.id, 4000, cfg);
    await stripe.pay(s.session_id);
    const session = stripe.sessions.get(s.session_id)!;
    const { intent_metadata: _, ...object } = session;
    const evt = unique("evt");
    expect(await stripe.send("checkout.session.completed", object, evt)).toBe(200);
    expect(await stripe.send("checkout.session.completed", object, evt)).toBe(200); // the same event id again
    await stripe.send("checkout.session.async_payment_succeeded", object);
    await Promise.all(Array.from({ length: 6 }, () => stripe.send("checkout.session.completed", object)));
    expect(await balanceOf(t.tenant.id)).toBe(4000);
    expect(await db().ledgerEntry.count({ where: { tenantId: t.tenant.id, kind: "deposit" } })).toBe(1);
    const outcomes = await db().stripeEvent.findMany({ where: { id: evt } });
    expect(outcomes.map((o) => o.outcome)).toEqual(["deposit_unchanged"]);
    expect(await db().notification.count({ where: { mailKind: "deposit_receipt", tenantId: t.tenant.id } })).toBe(2);
  });

  it("out of order: an expiry after the payment changes nothing; money that arrives after an expiry is still credited", async () => {
    const t = await prepaidTenant();
    const a = await startCardDeposit(t.asAdmin, t.tenant.id, 1500, cfg);
    await stripe.pay(a.session_id);
    const { intent_metadata: _a, ...paidSession } = stripe.sessions.get(a.session_id)!;
    await stripe.send("checkout.session.expired", { ...paidSession, status: "expired", payment_status: "unpaid" });
    expect((await db().cardDeposit.findUniqueOrThrow({ where: { id: a.id } })).status).toBe("paid");

    const b = await startCardDeposit(t.asAdmin, t.tenant.id, 2000, cfg);
    const { intent_metadata: _b, ...openSession } = stripe.sessions.get(b.session_id)!;
    await stripe.send("checkout.session.expired", { ...openSession, status: "expired" });
    expect((await db().cardDeposit.findUniqueOrThrow({ where: { id: b.id } })).status).toBe("expired");
    await stripe.send("checkout.session.completed", {
      ...openSession,
      status: "complete",
      payment_status: "paid",
      payment_intent: unique("pi"),
    });
    expect(await db().cardDeposit.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({ status: "paid", closedAt: null });
    expect(await balanceOf(t.tenant.id)).toBe(3500);
  });

  it("a session of another tenant, a different amount or currency, or one we never opened credits nobody and alerts operators", async () => {
    const t = await prepaidTenant();
    const other = await prepaidTenant();
    const s = await startCardDeposit(t.asAdmin, t.tenant.id, 3000, cfg);
    const { intent_metadata: _, ...open } = stripe.sessions.get(s.session_id)!;
    const paid = { ...open, status: "complete", payment_status: "paid", payment_intent: unique("pi") };
    await stripe.send("checkout.session.completed", { ...paid, metadata: { deposit_id: s.id, tenant_id: other.tenant.id } });
    await stripe.send("checkout.session.completed", { ...paid, amount_total: 300_000 });
    await stripe.send("checkout.session.completed", { ...paid, currency: "eur" });
    // a session id we never recorded, claiming our deposit's id
    await stripe.send("checkout.session.completed", { ...paid, id: unique("cs_test_forged") });
    await stripe.send("checkout.session.completed", {
      ...paid,
      id: unique("cs_test_else"),
      metadata: { deposit_id: "not-ours", tenant_id: t.tenant.id },
    });
    expect(await balanceOf(t.tenant.id)).toBe(0);
    expect(await balanceOf(other.tenant.id)).toBe(0);
    expect((await db().cardDeposit.findUniqueOrThrow({ where: { id: s.id } })).status).toBe("open");
    const alerts = await db().alertEvent.findMany({
      where: {
        ruleType: "unexpected_payment",
        subjectType: "card_deposit",
        OR: [{ subjectId: s.id }, { details: { path: ["metadata", "tenant_id"], equals: t.tenant.id } }],
      },
    });
    expect(alerts.length).toBeGreaterThanOrEqual(2);
    expect(alerts.every((a) => a.severity === "critical" && a.tenantId === null)).toBe(true);
    // the genuine payment still credits
    await stripe.pay(s.session_id);
    expect(await balanceOf(t.tenant.id)).toBe(3000);
  });

  it("an expired session and a failed payment leave a visible record and no money", async () => {
    const t = await prepaidTenant();
    const a = await startCardDeposit(t.asAdmin, t.tenant.id, 1000, cfg);
    await stripe.expire(a.session_id);
    const b = await startCardDeposit(t.asAdmin, t.tenant.id, 1200, cfg);
    expect(await stripe.pay(b.session_id, "4000 0000 0000 0002")).toMatchObject({ ok: false });
    const c = await startCardDeposit(t.asAdmin, t.tenant.id, 1300, cfg);
    const { intent_metadata: _, ...cs } = stripe.sessions.get(c.session_id)!;
    await stripe.send("checkout.session.completed", { ...cs, status: "complete", payment_status: "unpaid", payment_intent: unique("pi") });
    expect((await db().cardDeposit.findUniqueOrThrow({ where: { id: c.id } })).status).toBe("processing");
    await stripe.send("checkout.session.async_payment_failed", { ...cs, status: "complete", payment_status: "unpaid" });
    const listed = (await listCardDeposits(t.asAdmin.principal, t.tenant.id, { limit: 10 })).data;
    expect(listed.map((d) => [d.amount_cents, d.status, d.failed_attempts])).toEqual([
      [1300, "failed", 0],
      [1200, "open", 1],
      [1000, "expired", 0],
    ]);
    expect(listed[1]!.failure_message).toBe("Your card was declined.");
    expect(listed[0]!.failure_message).toContain("did not go through");
    expect(await balanceOf(t.tenant.id)).toBe(0);
    // the declined one can still be paid with another card
    await stripe.pay(b.session_id);
    expect(await balanceOf(t.tenant.id)).toBe(1200);
  });
});

describe("refunds made in Stripe", () => {
  it("debit the balance once per refunded cent, through partial refunds, replays and old events", async () => {
    const t = await prepaidTenant();
    const s = await startCardDeposit(t.asAdmin, t.tenant.id, 5000, cfg);
    await stripe.pay(s.session_id);
    const intent = stripe.sessions.get(s.session_id)!.payment_intent!;
    const refund = (amount: number) =>
      fetch(`${stripe.url}/v1/refunds`, { method: "POST", body: new URLSearchParams({ payment_intent: intent, amount: String(amount) }) });
    expect((await refund(1000)).status).toBe(200);
    expect(await balanceOf(t.tenant.id)).toBe(4000);
    const charge = { id: unique("ch"), object: "charge", amount: 5000, currency: "usd", payment_intent: intent, metadata: {} };
    // a replay of the first refund's total, and an older total, add nothing
    await stripe.send("charge.refunded", { ...charge, amount_refunded: 1000 });
    await stripe.send("charge.refunded", { ...charge, amount_refunded: 500 });
    expect(await balanceOf(t.tenant.id)).toBe(4000);
    expect((await refund(4000)).status).toBe(200);
    await Promise.all([1, 2, 3].map(() => stripe.send("charge.refunded", { ...charge, amount_refunded: 5000 })));
    expect(await balanceOf(t.tenant.id)).toBe(0);
    const refunds = await db().ledgerEntry.findMany({ where: { tenantId: t.tenant.id, kind: "card_refund" }, orderBy: { id: "asc" } });
    expect(refunds.map((r) => Number(r.amountCents))).toEqual([-1000, -4000]);
    expect(await db().cardDeposit.findUniqueOrThrow({ where: { id: s.id } })).toMatchObject({ refundedCents: 5000n, status: "paid" });
    expect(await db().notification.count({ where: { mailKind: "deposit_refunded", tenantId: t.tenant.id } })).toBe(4); // two refunds, two recipients
  });

  it("a refund that overtakes its payment's confirmation is refused (Stripe retries it) and applied once the payment is in", async () => {
    const t = await prepaidTenant();
    const s = await startCardDeposit(t.asAdmin, t.tenant.id, 2000, cfg);
    const intent = unique("pi");
    const charge = {
      id: unique("ch"),
      object: "charge",
      amount: 2000,
      currency: "usd",
      payment_intent: intent,
      amount_refunded: 2000,
      metadata: { deposit_id: s.id },
    };
    const early = await handleStripeWebhook(...(await signedPair("charge.refunded", charge))).catch((e: unknown) => e);
    expect(isAppError(early) && early.code).toBe("conflict");
    expect(await db().stripeEvent.count({ where: { type: "charge.refunded", id: { startsWith: "evt_early" } } })).toBe(0);
    const { intent_metadata: _, ...open } = stripe.sessions.get(s.session_id)!;
    await stripe.send("checkout.session.completed", { ...open, status: "complete", payment_status: "paid", payment_intent: intent });
    expect(await balanceOf(t.tenant.id)).toBe(2000);
    await stripe.send("charge.refunded", charge);
    expect(await balanceOf(t.tenant.id)).toBe(0);
  });

  it("a refund of a payment that is not a deposit (an invoice's) is acknowledged and changes no balance", async () => {
    const [payload, sig] = await signedPair("charge.refunded", {
      id: unique("ch"),
      object: "charge",
      amount: 100,
      amount_refunded: 100,
      payment_intent: unique("pi"),
      metadata: {},
    });
    expect(await handleStripeWebhook(payload, sig, { webhookSecret: secret })).toMatchObject({ outcome: "unknown_deposit" });
  });
});

async function signedPair(type: string, object: Record<string, unknown>): Promise<[string, string, { webhookSecret: string }]> {
  const { default: Stripe } = await import("stripe");
  const payload = JSON.stringify({ id: unique("evt_early"), object: "event", type, created: 1, data: { object } });
  return [payload, new Stripe("sk_test_x").webhooks.generateTestHeaderString({ payload, secret }), { webhookSecret: secret }];
}
