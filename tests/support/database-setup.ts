import { afterAll, inject } from "vitest";
import { TEST_ATTESTATION_KEY } from "./attestation-key";
import { E2E_BUNDLE_SIGNING_KEY } from "./bundle-signing-key";
import { E2E_SETTINGS_KEY } from "./settings-key";

// Services read DATABASE_URL through lib/env on first use: point them at this project's database.
process.env.DATABASE_URL = inject("databaseUrl");
Object.assign(process.env, { NODE_ENV: "test", SETTINGS_ENCRYPTION_KEY: E2E_SETTINGS_KEY });
// sessions are signed with a configured secret in every mode (there is no built-in one)
process.env.NEXTAUTH_SECRET ??= "integration-tests-secret-0123456789abcdef";
// verdicts are signed with a configured key in every mode (a test key: tests/support/attestation-key.ts)
process.env.ATTESTATION_SIGNING_KEY ??= TEST_ATTESTATION_KEY;
// the tests' little servers (model servers, spies standing in for replicas and pods) take whatever
// port the machine gives them; a test of the range sets its own before anything reads the env
process.env.AGENT_PUBLISHED_PORTS ??= "1024-65535";
// burst instances install the signed bundle: their start script carries the public key
process.env.BUNDLE_SIGNING_KEY ??= E2E_BUNDLE_SIGNING_KEY;

afterAll(async () => {
  const { disconnectDb } = await import("@/lib/db/client");
  await disconnectDb();
});
