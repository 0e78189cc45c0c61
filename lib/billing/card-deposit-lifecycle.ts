// A card deposit's state machine, pure. A deposit is one Stripe Checkout Session a tenant opened
// to add funds; Stripe's webhook events move it, in whatever order they arrive:
//
//   open ──completed, paid──────────────▶ paid (credited once)
//   open ──completed, payment pending───▶ processing ──async payment succeeded──▶ paid
//                                              └──async payment failed──▶ failed
//   open ──session expired──▶ expired
//
// Money that arrived is never refused: a paid event moves any deposit that is not paid yet to paid
// (an "expired" that overtook the payment, a "failed" that Stripe later overturned). Nothing moves a
// paid deposit back; refunds are counted beside it (refunded_cents), not as a state.

export const CARD_DEPOSIT_STATUSES = ["open", "processing", "paid", "expired", "failed"] as const;
export type CardDepositStatus = (typeof CARD_DEPOSIT_STATUSES)[number];

export type DepositEvent = { kind: "paid" } | { kind: "payment_pending" } | { kind: "expired" } | { kind: "async_failed" };

export type DepositTransition = { change: true; to: CardDepositStatus } | { change: false; why: string };

export function depositTransition(from: CardDepositStatus, e: DepositEvent): DepositTransition {
  switch (e.kind) {
    case "paid":
      return from === "paid" ? { change: false, why: "already credited" } : { change: true, to: "paid" };
    case "payment_pending":
      return from === "open" ? { change: true, to: "processing" } : { change: false, why: `a ${from} deposit does not wait for a payment` };
    case "expired":
      return from === "open" ? { change: true, to: "expired" } : { change: false, why: `a ${from} deposit does not expire` };
    case "async_failed":
      return from === "open" || from === "processing"
        ? { change: true, to: "failed" }
        : { change: false, why: `a ${from} deposit cannot fail` };
  }
}

/** How much of a refund Stripe reports (its charge's cumulative amount_refunded) is new: never more than was paid, never negative. */
export function newlyRefundedCents(amountCents: number, alreadyRefundedCents: number, cumulativeRefundedCents: number): number {
  return Math.max(0, Math.min(amountCents, cumulativeRefundedCents) - alreadyRefundedCents);
}

/** "DEP-1A2B3C4D": how receipts and the ledger name a deposit. */
export function depositLabel(id: string): string {
  return `DEP-${id.replace(/-/g, "").slice(0, 8).toUpperCase()}`;
}
