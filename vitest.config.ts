import path from "node:path";
import { defineConfig } from "vitest/config";

// Three projects, run in this order by `npm test` (scripts/test.ts): pure unit tests; integration
// tests against a real migrated PostgreSQL; end-to-end tests (HTTP + Chromium) against the
// production build. Database-backed projects start the database they need by themselves.
const shared = {
  resolve: {
    tsconfigPaths: true,
    // `server-only` throws outside Next's react-server build; tests call services directly.
    alias: { "server-only": path.resolve(import.meta.dirname, "tests/support/empty-module.ts") },
  },
};

export default defineConfig({
  test: {
    reporters: process.env.CI ? ["default"] : ["default"],
    projects: [
      // unit tests that drive the agent spawn real processes (a docker stand-in): a loaded machine needs more than the 5 s default
      { ...shared, test: { name: "unit", include: ["tests/unit/**/*.test.ts"], environment: "node", testTimeout: 30_000 } },
      {
        ...shared,
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts"],
          globalSetup: ["tests/support/database-global-setup.ts"],
          setupFiles: ["tests/support/database-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          maxWorkers: 2,
        },
      },
      {
        ...shared,
        test: {
          name: "e2e",
          include: ["tests/e2e/**/*.test.ts"],
          globalSetup: ["tests/support/database-global-setup.ts", "tests/support/app-global-setup.ts"],
          setupFiles: ["tests/support/database-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
