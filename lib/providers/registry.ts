import { env, type Env } from "@/lib/env";
import { lambdaAdapter } from "./lambda/adapter";
import { runpodAdapter } from "./runpod/adapter";
import type { ProviderAdapter } from "./types";
import { vastAdapter } from "./vast/adapter";
import { PROVIDERS, type ProviderName } from "./vocabulary";

// Which providers this deployment rents from: those whose key is configured. Base URLs and keys
// come from lib/env.ts only; nothing here returns or logs a key.

export function providerEnabled(name: ProviderName, e: Env = env()): boolean {
  return Boolean({ runpod: e.RUNPOD_API_KEY, lambda: e.LAMBDA_API_KEY, vast: e.VAST_API_KEY }[name]);
}

/** The adapter of an enabled provider; null when its key is not set. */
export function providerAdapter(name: ProviderName, e: Env = env()): ProviderAdapter | null {
  const timeoutMs = e.PROVIDER_TIMEOUT_MS;
  if (name === "runpod" && e.RUNPOD_API_KEY)
    return runpodAdapter({ url: e.RUNPOD_API_URL, key: e.RUNPOD_API_KEY, timeoutMs, image: e.PROVIDER_INSTANCE_IMAGE });
  if (name === "lambda" && e.LAMBDA_API_KEY)
    return lambdaAdapter({ url: e.LAMBDA_API_URL, key: e.LAMBDA_API_KEY, timeoutMs, sshKeyName: e.LAMBDA_SSH_KEY_NAME });
  if (name === "vast" && e.VAST_API_KEY)
    return vastAdapter({ url: e.VAST_API_URL, key: e.VAST_API_KEY, timeoutMs, image: e.PROVIDER_INSTANCE_IMAGE });
  return null;
}

export function enabledProviders(e: Env = env()): ProviderName[] {
  return PROVIDERS.filter((p) => providerEnabled(p, e));
}

/** The markup in force for a provider, in percent: its own override, else the default. */
export function markupPctOf(name: ProviderName, e: Env = env()): number {
  return { runpod: e.RUNPOD_MARKUP_PCT, lambda: e.LAMBDA_MARKUP_PCT, vast: e.VAST_MARKUP_PCT }[name] ?? e.PROVIDER_MARKUP_PCT;
}

/** The provider's daily spend cap (its cost, cents). */
export function dailyCapCentsOf(name: ProviderName, e: Env = env()): number {
  return { runpod: e.RUNPOD_DAILY_CAP_CENTS, lambda: e.LAMBDA_DAILY_CAP_CENTS, vast: e.VAST_DAILY_CAP_CENTS }[name];
}

/** Whether a provider's instances run containers (tenant images and commands): Lambda's VMs do; RunPod's and Vast's are containers themselves. */
export const RUNS_CONTAINERS: Record<ProviderName, boolean> = { runpod: false, lambda: true, vast: false };
