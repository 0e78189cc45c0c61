import { mkdirSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { freePort } from "../../scripts/lib/embedded-db";
import { E2E_ALERTMANAGER_TOKEN, E2E_METRICS_TOKEN } from "./operations-tokens";
import { E2E_SETTINGS_KEY } from "./settings-key";
import { E2E_STRIPE_WEBHOOK_SECRET } from "./stripe";
import { buildIsFresh, nextBuild, startNext, waitForHealthy } from "../../scripts/lib/next-server";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    artifactsDir: string;
  }
}

/** Serves the production build against this project's database on a free port. */
export default async function setup(project: TestProject) {
  const databaseUrl = project.getProvidedContext().databaseUrl;
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NEXTAUTH_SECRET: "e2e-secret-0123456789abcdef0123456789",
    SETTINGS_ENCRYPTION_KEY: E2E_SETTINGS_KEY,
    NODE_ENV: "production",
    DEMO_MODE: "0",
    LOG_LEVEL: "warn",
    // the tests' HTTP client acts as one trusted proxy (tests/support/http.ts)
    TRUSTED_PROXY_HOPS: "1",
    // webhooks are verified for real in the walks; no STRIPE_SECRET_KEY, so invoices use the local payment page
    STRIPE_WEBHOOK_SECRET: E2E_STRIPE_WEBHOOK_SECRET,
    // Prometheus and Alertmanager authenticate with static tokens of their own
    METRICS_TOKEN: E2E_METRICS_TOKEN,
    ALERTMANAGER_TOKEN: E2E_ALERTMANAGER_TOKEN,
    // the walks' simulated nodes live on loopback addresses; the gateway probes each replica every second
    NODE_ADDRESS_NETWORKS: "127.0.0.0/8",
    GATEWAY_PROBE_INTERVAL_MS: "1000",
    GATEWAY_FLUSH_MS: "1000",
  } as NodeJS.ProcessEnv;
  if (!buildIsFresh()) nextBuild(env);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const app = startNext({ port, env: { ...env, NEXTAUTH_URL: baseUrl }, quiet: true });
  await waitForHealthy(baseUrl);
  const artifactsDir = path.resolve("test-results");
  mkdirSync(path.join(artifactsDir, "screenshots"), { recursive: true });
  project.provide("baseUrl", baseUrl);
  project.provide("artifactsDir", artifactsDir);
  return () => app.stop();
}
