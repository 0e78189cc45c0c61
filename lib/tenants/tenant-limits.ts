import "server-only";
import type { Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { conflict, validationFailed } from "@/lib/errors";
import { formatCents, segmentAmountCents } from "@/lib/billing/money";
import { ACTIVE_PODS, ADD_PREPAID, LIVE_RESERVATIONS, PREPAID_OF, RATE_NOW, TENANT_LIMITS } from "./limit-statements";

// A tenant's limits (issue 29): how many pods it may have at once, how long and how many
// reservations, set by an operator (self-service sign-ups start with the operator's defaults); and
// a prepaid tenant's reservations are paid for their whole window up front, or refused: nothing it
// books can run up a debt. Each check runs under the tenant's row lock, which every writer of
// pods and reservations takes first, and the database's triggers refuse whatever passes by
// another path (migration 20261201040000_self_service_accounts).

const askOperator = "ask your operator to raise it";

/** A pod to be created or started would be one too many. The tenant's row must be locked. */
export async function assertPodLimit(tx: Tx, tenantId: string): Promise<void> {
  const [t] = await run(tx, TENANT_LIMITS, [tenantId]);
  if (!t || t.max_pods === null) return;
  const [active] = await run(tx, ACTIVE_PODS, [tenantId]);
  if (active!.n >= t.max_pods)
    throw conflict(
      `At most ${t.max_pods} pod${t.max_pods === 1 ? "" : "s"} may be active at once on this account; stop one first, or ${askOperator}`,
      [{ path: "pods", message: `The limit is ${t.max_pods}` }],
    );
}

/** The database's own refusal of a limit (a race another path lost), as the same answer the checks give. */
export function limitRefusal(e: unknown): never {
  const text = e instanceof Error ? e.message : String(e);
  if (/pods_tenant_limit|may have at most \d+ pods/.test(text))
    throw conflict("This account's pod limit was reached meanwhile; stop a pod first");
  if (/reservations_tenant_limit/.test(text)) throw conflict("This account's reservation limit was reached meanwhile");
  throw e;
}

export interface ReservationCharge {
  /** what to pay up front (null: an invoiced tenant pays as it runs) */
  prepaidCents: number | null;
}

/**
 * A reservation of `gpus` GPUs of `gpuType` for `seconds` (starting `lengthS` long in all): within
 * the tenant's limits, and for a prepaid tenant covered by its balance. Answers what to charge up
 * front. The tenant's row must be locked.
 */
export async function reservationTerms(
  tx: Tx,
  tenantId: string,
  b: { gpuType: string; gpus: number; seconds: number; lengthS: number; counting: boolean },
): Promise<ReservationCharge> {
  const [t] = await run(tx, TENANT_LIMITS, [tenantId]);
  if (!t) return { prepaidCents: null };
  if (t.max_reservation_hours !== null && b.lengthS > t.max_reservation_hours * 3600)
    throw validationFailed([
      { path: "ends_at", message: `Reservations on this account last at most ${t.max_reservation_hours} hours; ${askOperator}` },
    ]);
  if (b.counting && t.max_reservations !== null) {
    const [live] = await run(tx, LIVE_RESERVATIONS, [tenantId]);
    if (live!.n >= t.max_reservations)
      throw conflict(
        `This account may hold at most ${t.max_reservations} reservation${t.max_reservations === 1 ? "" : "s"} at once; ${askOperator}`,
        [{ path: "node_count", message: `The limit is ${t.max_reservations}` }],
      );
  }
  if (t.billing_mode !== "prepaid") return { prepaidCents: null };
  const [rate] = await run(tx, RATE_NOW, [b.gpuType]);
  const cents = segmentAmountCents(b.gpus * Math.ceil(b.seconds), rate?.cents_per_hour ?? 0);
  const balance = Number(t.balance);
  if (cents > balance)
    throw conflict(
      `A prepaid account pays for a reservation's whole window when booking: this one costs ${formatCents(cents)}, the balance is ${formatCents(balance)}. Add funds, or book a shorter window`,
      [{ path: "ends_at", message: `Costs ${formatCents(cents)} up front; the balance is ${formatCents(balance)}` }],
    );
  return { prepaidCents: cents };
}

/** Charges a prepaid reservation's up-front payment (or an extension's) to the balance. */
export async function chargeReservation(
  tx: Tx,
  reservationId: string,
  tenantId: string,
  cents: number,
  what: string,
  by: string,
): Promise<void> {
  await run(tx, ADD_PREPAID, [reservationId, cents]);
  if (cents <= 0) return;
  await tx.ledgerEntry.create({
    data: { tenantId, kind: "reservation", amountCents: BigInt(-cents), reservationId, description: what, createdBy: by },
  });
}

/**
 * A prepaid reservation that ended (cancelled, released early, or completed) gives back what its
 * segments did not draw: all of it when cancelled before its start. Each segment a holding bills
 * is charged like any prepaid usage and drawn from the up-front payment in the same statement
 * (the database's ledger_entries_draw_reservation_prepayment), so once the holdings are closed
 * and their final segments billed, the tenant has paid exactly what the reservation billed. Call
 * it after the holdings closed, with the reservation's row locked.
 */
export async function returnUnusedPrepayment(tx: Tx, reservationId: string, by: string): Promise<number> {
  const [r] = await run(tx, PREPAID_OF, [reservationId]);
  if (!r || r.prepaid_cents === null) return 0;
  const cents = Number(r.prepaid_cents) - Number(r.returned);
  if (cents <= 0) return 0;
  await tx.ledgerEntry.create({
    data: {
      tenantId: r.tenant_id,
      kind: "reservation_return",
      amountCents: BigInt(cents),
      reservationId,
      description: `Unused part of a reservation paid up front (${formatCents(cents)})`,
      createdBy: by,
    },
  });
  return cents;
}
