import { figureProblems } from "../../scripts/lib/bench-figures";

// Every benchmark has two sizes: the full one whose figures go in docs/performance.md, and a smoke
// size (BENCH_SMOKE=1: seconds) that npm test runs so that a benchmark that no longer runs is a
// broken build. The smoke run exercises every phase, only smaller; its figures mean nothing.

export const SMOKE = process.env.BENCH_SMOKE === "1";

/** A size: the environment variable when set, else the smoke or the full default. */
export function benchSize(variable: string, full: number, smoke: number): number {
  const raw = process.env[variable];
  if (raw === undefined || raw === "") return SMOKE ? smoke : full;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${variable}: expected a number, got ${JSON.stringify(raw)}`);
  return n;
}

/** 1 for yes, 0 for no: figures are numbers. */
export const flag = (yes: boolean) => (yes ? 1 : 0);

/**
 * Prints the benchmark's one JSON object, after checking that every figure is a finite number:
 * a figure that came out missing, NaN or null is a broken benchmark, said here with its path.
 * `nullsAllowed`: the run left some phases out on purpose, and their figures print null.
 */
export function printFigures(figures: Record<string, unknown>, opts: { nullsAllowed?: boolean } = {}): void {
  const problems = figureProblems(figures).filter((p) => !(opts.nullsAllowed && p.endsWith(": null is not a number")));
  if (problems.length) throw new Error(`the benchmark's figures are incomplete:\n  ${problems.join("\n  ")}`);
  console.log(JSON.stringify(figures, null, 2));
}
