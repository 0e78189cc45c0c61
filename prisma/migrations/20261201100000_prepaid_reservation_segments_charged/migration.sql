-- Every prepaid segment is charged exactly once, a reservation paid up front included.
--
-- 20261201040000_self_service_accounts made a prepaid tenant pay for a reservation's whole window
-- when booking, and then dropped the meter's per-segment charges for its holdings with a BEFORE
-- INSERT trigger that returned NULL: the usage event stayed (amount > 0, settlement 'prepaid')
-- with no ledger entry at all, so the ledger no longer equalled the usage it charges (the soak's
-- run_not_billed_exactly_once: "prepaid segment … charged nothing"), and what the tenant paid was
-- an estimate (the whole window at the booking's rate, less a pro-rata return) rather than what
-- was billed.
--
-- Now the up-front payment is a prepayment the segments draw on: each holding segment is charged
-- as any prepaid segment is (one 'charge' of its amount, tied to its usage event), and in the same
-- statement as much of it as the prepayment still covers comes back to the balance as a
-- 'reservation_return' of the reservation. So the balance does not pay twice while it runs; a
-- segment the prepayment no longer covers (the rate rose after booking) is charged to the balance
-- like any other prepaid usage, never silently nothing. When the reservation ends (cancelled,
-- released, completed) the part not drawn is returned (lib/tenants/tenant-limits.ts), so in the
-- end the tenant paid exactly the sum of its segments.
--
-- The reservation's row is locked while drawing, so holdings billed in parallel never draw more
-- than was paid.
DROP TRIGGER "ledger_entries_skip_prepaid_reservations" ON "ledger_entries";
DROP FUNCTION "ledger_entries_skip_prepaid_reservations"();

CREATE FUNCTION "ledger_entries_draw_reservation_prepayment"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    res UUID;
    paid BIGINT;
    drawn BIGINT;
    cover BIGINT;
BEGIN
    SELECT r."id", r."prepaid_cents" INTO res, paid
      FROM "usage_events" u JOIN "reservations" r ON r."id" = u."reservation_id"
     WHERE u."id" = NEW."usage_event_id" AND u."reservation_node_id" IS NOT NULL AND r."prepaid_cents" IS NOT NULL
       FOR UPDATE OF r;
    IF NOT FOUND THEN RETURN NULL; END IF;
    SELECT COALESCE(sum("amount_cents"), 0) INTO drawn FROM "ledger_entries" WHERE "reservation_id" = res AND "kind" = 'reservation_return';
    cover := LEAST(-NEW."amount_cents", paid - drawn);
    IF cover > 0 THEN
        INSERT INTO "ledger_entries" ("tenant_id", "kind", "amount_cents", "reservation_id", "description", "created_by")
        VALUES (NEW."tenant_id", 'reservation_return', cover, res, 'Paid up front with the reservation: ' || NEW."description", NEW."created_by");
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER "ledger_entries_draw_reservation_prepayment" AFTER INSERT ON "ledger_entries"
    FOR EACH ROW WHEN (NEW."kind" = 'charge' AND NEW."usage_event_id" IS NOT NULL)
    EXECUTE FUNCTION "ledger_entries_draw_reservation_prepayment"();
