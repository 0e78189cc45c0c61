import { afterAll, inject } from "vitest";

// Services read DATABASE_URL through lib/env on first use: point them at this project's database.
process.env.DATABASE_URL = inject("databaseUrl");
Object.assign(process.env, { NODE_ENV: "test" });
// sessions are signed with a configured secret in every mode (there is no built-in one)
process.env.NEXTAUTH_SECRET ??= "integration-tests-secret-0123456789abcdef";

afterAll(async () => {
  const { disconnectDb } = await import("@/lib/db/client");
  await disconnectDb();
});
