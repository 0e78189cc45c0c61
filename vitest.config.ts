import path from "node:path";
import { configDefaults, defineConfig } from "vitest/config";

// Four projects, run in this order by `npm test` (scripts/test.ts): pure unit tests; integration
// tests against a real migrated PostgreSQL; end-to-end tests against the production build, in two
// projects that run side by side, each with its own database and server: the browser walks (`e2e`)
// and the machine clients and real parts (`e2e-systems`: HTTP, Slurm, docker, BMCs, installers).
// Database-backed projects start the database they need by themselves.
const e2eBrowser = ["tests/e2e/**/*browser.test.ts", "tests/e2e/public-site.test.ts"];
const e2e = {
  globalSetup: ["tests/support/database-global-setup.ts", "tests/support/app-global-setup.ts"],
  setupFiles: ["tests/support/database-setup.ts"],
  testTimeout: 120_000,
  hookTimeout: 180_000,
  fileParallelism: false,
};

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
      { ...shared, test: { name: "e2e", include: e2eBrowser, ...e2e } },
      {
        ...shared,
        test: { name: "e2e-systems", include: ["tests/e2e/**/*.test.ts"], exclude: [...configDefaults.exclude, ...e2eBrowser], ...e2e },
      },
    ],
  },
});
