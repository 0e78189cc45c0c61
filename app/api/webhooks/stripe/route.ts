import { billing } from "@/lib/api/contracts";
import { handleStripeWebhook } from "@/lib/billing/stripe-webhook";
import { readTextBody } from "@/lib/http/read-body";
import { route } from "@/lib/http/route";

// The signature covers the exact bytes Stripe sent, so the body is read raw, never re-serialised.
export const POST = route(billing.stripeWebhook, async ({ request, reply }) => {
  const raw = await readTextBody(request, billing.stripeWebhook.bodyLimitBytes!);
  const { outcome } = await handleStripeWebhook(raw, request.headers.get("stripe-signature"));
  return reply(200, { received: true, outcome });
});
