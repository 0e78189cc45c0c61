-- An invoice's payment link is emailed to the tenant's billing address through the same outbox as
-- alerts and demo requests, so the invoice page says "sent" only when a channel sent it (issue 32:
-- it said "Payment link sent to the tenant" though nothing ever sent it). A notification is about
-- exactly one thing: an alert event, a demo request or an invoice. The kind and subject CHECKs
-- are redefined to admit the third subject.
ALTER TABLE "notifications" ADD COLUMN "invoice_id" UUID;
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE UNIQUE INDEX "notifications_invoice_id_channel_key" ON "notifications"("invoice_id", "channel") WHERE "invoice_id" IS NOT NULL;
ALTER TABLE "notifications" DROP CONSTRAINT "notifications_subject_check";
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_subject_check"
    CHECK (num_nonnulls("alert_event_id", "demo_request_id", "invoice_id") = 1);
ALTER TABLE "notifications" DROP CONSTRAINT "notifications_kind_check";
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_kind_check" CHECK (
    "kind" IN ('firing', 'resolved', 'demo_request', 'invoice')
    AND (("kind" = 'demo_request') = ("demo_request_id" IS NOT NULL))
    AND (("kind" = 'invoice') = ("invoice_id" IS NOT NULL)));
-- an invoice's payment link goes to the tenant by email only (the webhook is the operator's channel)
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_invoice_channel_check" CHECK ("invoice_id" IS NULL OR "channel" = 'email');
