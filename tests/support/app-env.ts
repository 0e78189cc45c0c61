import { E2E_BUNDLE_SIGNING_KEY } from "./bundle-signing-key";
import { E2E_ALERTMANAGER_TOKEN, E2E_METRICS_TOKEN } from "./operations-tokens";
import { TEST_ATTESTATION_KEY } from "./attestation-key";
import { E2E_SETTINGS_KEY } from "./settings-key";
import { E2E_STRIPE_WEBHOOK_SECRET } from "./stripe";

export const E2E_AUTH_SECRET = "e2e-secret-0123456789abcdef0123456789";

/** How the e2e stage runs the app (and any second app process or ingest server beside it) on its database. */
export function e2eServerEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NEXTAUTH_SECRET: E2E_AUTH_SECRET,
    SETTINGS_ENCRYPTION_KEY: E2E_SETTINGS_KEY,
    ATTESTATION_SIGNING_KEY: TEST_ATTESTATION_KEY,
    NODE_ENV: "production",
    DEMO_MODE: "0",
    LOG_LEVEL: "warn",
    // every route checks its response against its contract: a drift answers 500 and fails the walk
    VALIDATE_RESPONSES: "1",
    // the tests' HTTP client acts as one trusted proxy (tests/support/http.ts)
    TRUSTED_PROXY_HOPS: "1",
    // webhooks are verified for real in the walks; no STRIPE_SECRET_KEY, so invoices use the local payment page
    STRIPE_WEBHOOK_SECRET: E2E_STRIPE_WEBHOOK_SECRET,
    // self-service sign-up is on (the walks cover its public forms; an operator's setting can turn it off)
    SELF_SERVICE_SIGNUP: "1",
    // Prometheus and Alertmanager authenticate with static tokens of their own
    METRICS_TOKEN: E2E_METRICS_TOKEN,
    ALERTMANAGER_TOKEN: E2E_ALERTMANAGER_TOKEN,
    // the walks' simulated nodes live on loopback addresses, the real-docker walk's node in 198.18.0.0/15
    // (tests/support/real-docker.ts); the gateway probes each replica every second
    NODE_ADDRESS_NETWORKS: "127.0.0.0/8, 198.18.0.0/15",
    // …and so do the walks' simulated BMCs: loopback is a BMC's address only where the deployment lists it
    BMC_NETWORKS: "127.0.0.0/8",
    // the simulated nodes' listeners take whatever port their machine gives them
    AGENT_PUBLISHED_PORTS: "1024-65535",
    // node bundles are served signed (tests/e2e/agent-install.test.ts installs one)
    BUNDLE_SIGNING_KEY: E2E_BUNDLE_SIGNING_KEY,
    GATEWAY_PROBE_INTERVAL_MS: "1000",
    GATEWAY_FLUSH_MS: "1000",
  } as NodeJS.ProcessEnv;
}
