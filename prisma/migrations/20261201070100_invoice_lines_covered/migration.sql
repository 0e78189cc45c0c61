-- Work that ran inside a reservation costs nothing more (its nodes are billed as the reservation's
-- own line), and its invoice line said "$0.00" as if it had been free or forgotten (issue 32). A
-- line whose usage was all covered by one reservation names it; such a line costs nothing.
ALTER TABLE "invoice_lines" ADD COLUMN "covered_by_reservation_id" UUID;
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_covered_by_reservation_id_fkey"
    FOREIGN KEY ("covered_by_reservation_id") REFERENCES "reservations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_covered_check" CHECK ("covered_by_reservation_id" IS NULL OR "amount_cents" = 0);
