import { alertmanagerReply, alertmanagerWebhookBody } from "@/lib/alerts/alertmanager-schemas";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";

// What the platform's own operators run beside it: Prometheus scrapes it, Alertmanager feeds it.
// Both take an operator key, or a token of their own from the configuration (Prometheus and
// Alertmanager send a static bearer token), compared by the route wrapper.

const tokenErrors = {
  401: { description: "No credentials, or not the configured token", schema: errorBodySchema },
  403: { description: "Credentials that are not an operator's", schema: errorBodySchema },
} as const;

export const metrics = defineContract({
  operationId: "getPrometheusMetrics",
  method: "GET",
  path: "/api/metrics",
  summary: "Prometheus text exposition: the fleet's gauges and this process's own counters and histograms",
  description:
    "For an operator key or the METRICS_TOKEN bearer token. Every app process serves the same fleet gauges (scrape one, or aggregate with max) and its own request, scheduler, ingest and background figures.",
  tags: ["Operations"],
  access: "public",
  machineToken: "METRICS_TOKEN",
  rateLimitPerMinute: 600,
  responses: { 200: { description: "text/plain; version=0.0.4" }, ...tokenErrors },
});

export const alertmanagerWebhook = defineContract({
  operationId: "alertmanagerWebhook",
  method: "POST",
  path: "/api/webhooks/alertmanager",
  summary:
    "Alertmanager's webhook: alerts about GPUs and nodes fire and resolve external alert events, and may quarantine within the blast-radius cap",
  description:
    "For the ALERTMANAGER_TOKEN bearer token (Alertmanager's http_config.authorization) or an operator key. Re-sent payloads change nothing.",
  tags: ["Operations"],
  access: "public",
  machineToken: "ALERTMANAGER_TOKEN",
  body: alertmanagerWebhookBody,
  bodyLimitBytes: 1024 * 1024,
  rateLimitPerMinute: 600,
  responses: {
    200: { description: "Received", schema: alertmanagerReply },
    400: { description: "Not an Alertmanager payload; details name the field", schema: errorBodySchema },
    ...tokenErrors,
  },
});
