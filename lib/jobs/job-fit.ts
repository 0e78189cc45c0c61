/**
 * Whether a job of a given size can run for a tenant, in the tenant's words (pure): the submit form
 * says it live as the numbers change, and the console's submit action refuses with the same
 * sentence. "never": larger than the quota or the fleet (or any job may be); "wait": it fits, but
 * the GPUs the organisation holds now leave it waiting for quota.
 */
export const MAX_JOB_GPUS = 4096;

export interface FitContext {
  quota: number;
  inUse: number;
  /** GPUs the fleet has of each type (missing ones not counted) */
  capacity: Record<string, number>;
}

export interface Fit {
  level: "ok" | "wait" | "never";
  message: string | null;
}

const n = (x: number) => x.toLocaleString("en-US");
const gpus = (x: number) => `${n(x)} GPU${x === 1 ? "" : "s"}`;

export function jobFit(ctx: FitContext, gpuCount: number, gpuType: string): Fit {
  if (!Number.isInteger(gpuCount) || gpuCount < 1) return { level: "never", message: "Ask for a whole number of GPUs, 1 or more." };
  const fleet = ctx.capacity[gpuType] ?? 0;
  if (gpuCount > ctx.quota) {
    const alsoFleet = gpuCount > fleet ? ` and than the ${gpus(fleet)} of type ${gpuType} in the fleet` : "";
    return {
      level: "never",
      message: `${gpus(gpuCount)} is more than your organisation's quota of ${n(ctx.quota)}${alsoFleet}: this job could never start. Ask your operator for a larger quota.`,
    };
  }
  if (gpuCount > fleet)
    return {
      level: "never",
      message: `The fleet has ${gpus(fleet)} of type ${gpuType} in all: a job of ${n(gpuCount)} could never start.`,
    };
  if (gpuCount > MAX_JOB_GPUS) return { level: "never", message: `No job may ask for more than ${n(MAX_JOB_GPUS)} GPUs; split the work.` };
  if (ctx.inUse + gpuCount > ctx.quota) {
    const short = ctx.inUse + gpuCount - ctx.quota;
    return {
      level: "wait",
      message: `Your organisation holds ${n(ctx.inUse)} of its ${gpus(ctx.quota)} now: this job will wait until ${gpus(short)} ${short === 1 ? "is" : "are"} free.`,
    };
  }
  return { level: "ok", message: null };
}

/** A warning for an operator setting a quota no fleet of this size can fill, or null. */
export function quotaWarning(quota: number, fleetGpus: number): string | null {
  if (quota <= fleetGpus) return null;
  return fleetGpus === 0
    ? `The fleet has no GPUs yet: a quota of ${n(quota)} cannot be used until nodes register.`
    : `The fleet has ${gpus(fleetGpus)} in all: a quota of ${n(quota)} is ${Math.round((10 * quota) / fleetGpus) / 10}× that and can never be used in full.`;
}
