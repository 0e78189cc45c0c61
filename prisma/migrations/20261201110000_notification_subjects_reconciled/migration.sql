-- Issues 29 and 32 each redefined the notifications' kind and subject CHECKs from the same base:
-- self-service account mail (kind 'account', about no alert, demo request or invoice) and an
-- invoice's payment link (kind 'invoice', about exactly that invoice). Both kinds stand together.
ALTER TABLE "notifications" DROP CONSTRAINT "notifications_kind_check";
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_kind_check" CHECK (
    "kind" IN ('firing', 'resolved', 'demo_request', 'account', 'invoice')
    AND (("kind" = 'demo_request') = ("demo_request_id" IS NOT NULL))
    AND (("kind" = 'invoice') = ("invoice_id" IS NOT NULL))
    AND (("kind" = 'account') = ("mail_kind" IS NOT NULL)));
ALTER TABLE "notifications" DROP CONSTRAINT "notifications_subject_check";
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_subject_check" CHECK (
    num_nonnulls("alert_event_id", "demo_request_id", "invoice_id") = CASE WHEN "kind" = 'account' THEN 0 ELSE 1 END);
