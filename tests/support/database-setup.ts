import { afterAll, inject } from "vitest";
import { E2E_SETTINGS_KEY } from "./settings-key";

// Services read DATABASE_URL through lib/env on first use: point them at this project's database.
process.env.DATABASE_URL = inject("databaseUrl");
Object.assign(process.env, { NODE_ENV: "test", SETTINGS_ENCRYPTION_KEY: E2E_SETTINGS_KEY });
// sessions are signed with a configured secret in every mode (there is no built-in one)
process.env.NEXTAUTH_SECRET ??= "integration-tests-secret-0123456789abcdef";
// the tests' little servers (model servers, spies standing in for replicas and pods) take whatever
// port the machine gives them; a test of the range sets its own before anything reads the env
process.env.AGENT_PUBLISHED_PORTS ??= "1024-65535";

afterAll(async () => {
  const { disconnectDb } = await import("@/lib/db/client");
  await disconnectDb();
});
