// What the fleet simulator's hardware and containers report, as pure functions of what runs on
// them: endpoint traffic on a slow wave, serving samples whose latency rises with load, a model's
// answers, and the exit a simulated container ends with.
import { createHash } from "node:crypto";

/** Seconds a simulated replica takes to load its model before it reports healthy. */
export const SIM_MODEL_LOAD_S = 6;

export const noise = (spread: number) => (Math.random() * 2 - 1) * spread;

/** Requests per second an endpoint receives at time t: its own base rate on a ten-minute wave. */
export function simulatedEndpointLoad(endpointId: string, t: number): number {
  const h = createHash("sha256").update(endpointId).digest();
  const base = 6 + (h[0]! % 15);
  const phase = (h[1]! / 255) * 2 * Math.PI;
  return base * (1 + 0.5 * Math.sin((2 * Math.PI * t) / 600_000 + phase));
}

/**
 * One serving sample of a replica carrying `rps` requests per second over `seconds`. Latency rises
 * with load and levels off the way a batching server's does (p95 stays under ~360 ms): a healthy
 * simulated replica meets the demo endpoints' SLA targets, so the demo never alerts on itself.
 */
export function simulatedReplicaSample(replicaId: string, rps: number, seconds: number, at: string) {
  const requests = Math.max(0, Math.round(rps * seconds + noise(1)));
  const p50 = 70 + (110 * rps) / (rps + 12) + noise(4);
  const p95 = p50 * 1.9 + noise(8);
  return {
    replica_id: replicaId,
    recorded_at: at,
    requests,
    errors: Math.random() < 0.05 ? Math.min(requests, 1) : 0,
    p50_ms: Math.round(Math.max(1, p50)),
    p95_ms: Math.round(Math.max(p50, p95)),
    p99_ms: Math.round(Math.max(p50, p95) * 1.45),
    tokens_per_s: Math.round(rps * 170),
  };
}

/**
 * What a simulated model answers: a grader prompt ("Reply PASS or RETRY") never passes the first
 * iteration (so a loop is seen looping), and passes more often the later the iteration it names,
 * always by the fourth; anything else gets a short plan.
 */
export function simulatedCompletion(prompt: string, model: string, random = Math.random()) {
  const iteration = Number(/iteration (\d+)/i.exec(prompt)?.[1] ?? 0);
  const content = /PASS or RETRY/i.test(prompt)
    ? iteration >= 1 && random < 0.25 + 0.25 * iteration
      ? "PASS"
      : "RETRY"
    : `1. Lower the learning rate to ${(2 + Math.floor(random * 3)) * 1e-4}. 2. Train ${1 + Math.floor(random * 3)} more epochs on the cleaned shard. 3. Re-run the eval suite.`;
  return {
    id: `chatcmpl-sim-${Math.floor(random * 1e9)}`,
    object: "chat.completion",
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: Math.ceil(content.length / 4) },
  };
}

/**
 * The exit code a simulated container ends with: a command that ends in `exit N` fails with N
 * (how a workload asks the simulator for a failing run), anything else succeeds.
 */
export function simulatedExitCode(command: string | undefined): number {
  const m = command ? /(?:^|[;&|]\s*)exit\s+(\d{1,3})\s*$/.exec(command) : null;
  return m ? Number(m[1]) : 0;
}

const GPU_PROFILES: Record<string, { memoryMb: number; tdpW: number }> = {
  H100: { memoryMb: 81_559, tdpW: 700 },
  H200: { memoryMb: 143_771, tdpW: 700 },
  A100: { memoryMb: 81_920, tdpW: 400 },
  L40S: { memoryMb: 46_068, tdpW: 350 },
  B200: { memoryMb: 183_359, tdpW: 1_000 },
  MI300X: { memoryMb: 196_608, tdpW: 750 },
  GH200: { memoryMb: 97_871, tdpW: 900 },
};

export function gpuProfile(gpuType: string): { memoryMb: number; tdpW: number } {
  const p = GPU_PROFILES[gpuType];
  if (!p) throw new Error(`the simulator has no profile for GPU type ${gpuType} (known: ${Object.keys(GPU_PROFILES).join(", ")})`);
  return p;
}
