import type { ProviderName } from "./vocabulary";

// The one interface every provider adapter implements (lib/providers/<name>/adapter.ts), in
// GPUForge's vocabulary. Nothing outside a provider's folder knows its field names; what crosses
// this line is ours: integer cents per GPU-hour, our region and offer ids, and four states.

/** A provider's offer, before our GPU-type mapping and markup (lib/providers/offers.ts adds both). */
/** The most a provider may charge per GPU-hour for an offer we keep (100,000 $): beyond it, a misread answer. */
const MAX_OFFER_COST_CENTS = 10_000_000;

/**
 * Why one offer from a provider's answer cannot be kept (null: it can), pure. An adapter maps the
 * provider's JSON by hand; a field of the wrong type or out of range in one offer must skip that
 * offer, not fail the statement that stores them all (the database's checks are the same bounds).
 */
export function offerProblem(o: unknown): string | null {
  if (typeof o !== "object" || o === null) return "not an object";
  const r = o as Record<string, unknown>;
  const text = (k: string, max: number) => typeof r[k] === "string" && (r[k] as string).length >= 1 && (r[k] as string).length <= max;
  if (!text("offerId", 300)) return "offerId: not a string of 1 to 300 characters";
  if (!text("providerGpuType", 200)) return "providerGpuType: not a string of 1 to 200 characters";
  if (!text("region", 200)) return "region: not a string of 1 to 200 characters";
  if (!Number.isInteger(r.gpuCount) || (r.gpuCount as number) < 1 || (r.gpuCount as number) > 64)
    return "gpuCount: not a whole number from 1 to 64";
  if (typeof r.interruptible !== "boolean") return "interruptible: not a boolean";
  const cost = r.costCentsPerGpuHour;
  if (!Number.isInteger(cost) || (cost as number) < 1 || (cost as number) > MAX_OFFER_COST_CENTS)
    return `costCentsPerGpuHour: not a whole number of cents from 1 to ${MAX_OFFER_COST_CENTS}`;
  return null;
}

export interface ProviderOffer {
  /** stable for the provider: what launch() is given back */
  offerId: string;
  /** the provider's own name for the GPU (mapped to ours by the operator-editable mapping) */
  providerGpuType: string;
  gpuCount: number;
  region: string;
  /** the provider may take it back (spot, bid) */
  interruptible: boolean;
  /** what the provider charges per GPU-hour, rounded up to a whole cent (we never price under it) */
  costCentsPerGpuHour: number;
}

export interface LaunchSpec {
  /** `gpuforge-<instance id>`: the reconciler recognises our instances by it */
  name: string;
  offer: ProviderOffer;
  /** what the instance's agent needs (GPUFORGE_URL, GPUFORGE_AGENT_KEY, GPUFORGE_HOSTNAME) */
  env: Record<string, string>;
  /** the shell script that installs and starts the agent (lib/providers/start-script.ts) */
  startScript: string;
}

/** An instance as the provider reports it, in four states of ours (its own word in providerStatus). */
export interface InstanceReport {
  externalId: string;
  /** the name we gave it at launch, when the provider reports one */
  name: string | null;
  /** booting: not up yet; running: up; interrupted: the provider stopped it (outbid, preempted); gone: no longer exists */
  state: "booting" | "running" | "interrupted" | "gone";
  providerStatus: string;
}

export interface ProviderAdapter {
  readonly name: ProviderName;
  listOffers(): Promise<ProviderOffer[]>;
  /** the provider's id of the new instance; throws ProviderError (kind "capacity" when it has none) */
  launch(spec: LaunchSpec): Promise<{ externalId: string }>;
  /** an instance that no longer exists is `gone`, never an error */
  status(externalId: string): Promise<InstanceReport>;
  /** terminating an instance that is already gone is not an error */
  terminate(externalId: string): Promise<void>;
  /** every instance the account has (the reconciler compares them with ours) */
  listInstances(): Promise<InstanceReport[]>;
}

/**
 * What went wrong talking to a provider, in kinds the burst policy acts on: capacity (try the next
 * offer), rate_limited (wait retryAfterS), unavailable (5xx, timeouts, unreachable: back off the
 * provider), auth (our key is refused), rejected (the provider refused the request itself).
 * The message never contains a key.
 */
export type ProviderErrorKind = "capacity" | "rate_limited" | "unavailable" | "auth" | "rejected";

export class ProviderError extends Error {
  constructor(
    readonly provider: ProviderName,
    readonly kind: ProviderErrorKind,
    message: string,
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

export function isProviderError(e: unknown): e is ProviderError {
  return e instanceof Error && e.name === "ProviderError" && "kind" in e && "provider" in e;
}
