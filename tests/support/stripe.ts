/** The webhook secret the e2e app runs with (no STRIPE_SECRET_KEY: invoices use the local payment page). */
export const E2E_STRIPE_WEBHOOK_SECRET = "whsec_e2e_0123456789abcdef0123456789";
