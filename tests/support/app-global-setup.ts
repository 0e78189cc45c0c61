import { mkdirSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { freePort } from "../../scripts/lib/embedded-db";
import { e2eServerEnv } from "./app-env";
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
  const env = e2eServerEnv(databaseUrl);
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
