// When a loop's last step completes: another iteration, or the loop is over. Pure; property-tested
// (never more than `max` iterations; a false condition always advances to the next iteration while
// iterations and time remain).

export type LoopDecision = { kind: "again" } | { kind: "done"; reason: string } | { kind: "exhausted"; reason: string };

export interface LoopFacts {
  /** iterations completed, the one that just ended included (≥ 1) */
  runs: number;
  max: number;
  /** whether the loop has an until condition (without one it runs exactly max times) */
  conditional: boolean;
  /** the condition's value over the latest outputs (conditional loops) */
  condition?: boolean;
  /** since the loop's first iteration started */
  elapsedMs: number;
  timeoutS: number | null;
}

export function loopDecision(f: LoopFacts): LoopDecision {
  if (f.conditional && f.condition === true)
    return { kind: "done", reason: `condition met after ${f.runs} iteration${f.runs === 1 ? "" : "s"}` };
  if (f.runs >= f.max) {
    return f.conditional
      ? { kind: "exhausted", reason: `condition still false after ${f.max} iteration${f.max === 1 ? "" : "s"} (max)` }
      : { kind: "done", reason: `all ${f.max} runs completed` };
  }
  if (f.timeoutS !== null && f.elapsedMs >= f.timeoutS * 1000) {
    return { kind: "exhausted", reason: `time limit of ${f.timeoutS} s reached after ${f.runs} iteration${f.runs === 1 ? "" : "s"}` };
  }
  return { kind: "again" };
}
