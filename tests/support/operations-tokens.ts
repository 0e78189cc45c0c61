/** The static tokens the e2e server is configured with, as Prometheus and Alertmanager would send them. */
export const E2E_METRICS_TOKEN = "e2e-metrics-token-0123456789abcdef";
export const E2E_ALERTMANAGER_TOKEN = "e2e-alertmanager-token-0123456789";
