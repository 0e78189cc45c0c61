import { classifyXid } from "./xid-policy";

// Health scores, 0 (do not use) to 100 (perfect). Pure functions of what the fleet knows.
//
// Per GPU, starting from 100:
//   - a fatal XID (lib/fleet/xid-policy.ts), an uncorrectable ECC error or a failed row remap: 0
//   - temperature: nothing below the warning limit; then a straight line down to −60 at the
//     critical limit (defaults: 80 °C warning, 90 °C critical; H100/H200 slow down near 87–90 °C)
//   - each application XID in the window: −5 (at most −20); an unlisted XID: −10 each (at most −30)
//   - a GPU the agent stopped reporting (missing) or reported unhealthy: 0
// Per node: the worst GPU's score, then heartbeat freshness: no penalty within 2 intervals,
// −30 when staler, 0 when the node is offline. A node without GPUs scores on freshness alone.

export interface TemperatureLimits {
  warningC: number;
  criticalC: number;
}

const DEFAULT_TEMPERATURE_LIMITS: TemperatureLimits = { warningC: 80, criticalC: 90 };

export interface GpuHealthInput {
  status: "available" | "unhealthy" | "missing" | "allocated";
  temperatureC?: number | null;
  recentXids?: readonly number[];
  eccUncorrected?: number | null;
  remapFailure?: boolean;
}

export interface HealthScore {
  score: number;
  reasons: string[];
}

export function gpuHealth(input: GpuHealthInput, limits: TemperatureLimits = DEFAULT_TEMPERATURE_LIMITS): HealthScore {
  const reasons: string[] = [];
  if (input.status === "missing") return { score: 0, reasons: ["GPU missing from the agent's inventory"] };
  if (input.status === "unhealthy") reasons.push("marked unhealthy");
  const xids = input.recentXids ?? [];
  const fatal = xids.map(classifyXid).find((r) => r.severity === "fatal");
  if (fatal) reasons.push(`fatal XID ${fatal.xid} (${fatal.name})`);
  if ((input.eccUncorrected ?? 0) > 0) reasons.push(`${input.eccUncorrected} uncorrectable ECC error(s)`);
  if (input.remapFailure) reasons.push("row remapping failed");
  if (reasons.length) return { score: 0, reasons };

  let score = 100;
  const t = input.temperatureC;
  if (t != null && t > limits.warningC) {
    const span = limits.criticalC - limits.warningC;
    const penalty = t >= limits.criticalC ? 60 : Math.round((60 * (t - limits.warningC)) / span);
    score -= penalty;
    reasons.push(`${Math.round(t)} °C (warning ${limits.warningC} °C, critical ${limits.criticalC} °C)`);
  }
  const app = xids.filter((x) => classifyXid(x).severity === "application").length;
  if (app) {
    score -= Math.min(20, 5 * app);
    reasons.push(`${app} application XID(s)`);
  }
  const unknown = xids.filter((x) => classifyXid(x).severity === "unknown").length;
  if (unknown) {
    score -= Math.min(30, 10 * unknown);
    reasons.push(`${unknown} unlisted XID(s)`);
  }
  return { score: Math.max(0, score), reasons };
}

export function nodeHealth(input: {
  status: string;
  heartbeatAgeS: number | null;
  heartbeatIntervalS: number;
  gpus: HealthScore[];
}): HealthScore {
  if (input.status === "offline") return { score: 0, reasons: ["offline: heartbeats stopped"] };
  const worst = input.gpus.reduce<HealthScore>((w, g) => (g.score < w.score ? g : w), { score: 100, reasons: [] });
  let score = worst.score;
  const reasons = [...worst.reasons];
  if (input.heartbeatAgeS === null) {
    score = Math.min(score, 50);
    reasons.push("no heartbeat yet");
  } else if (input.heartbeatAgeS > 2 * input.heartbeatIntervalS) {
    score = Math.max(0, score - 30);
    reasons.push(`last heartbeat ${Math.round(input.heartbeatAgeS)} s ago`);
  }
  return { score, reasons };
}
