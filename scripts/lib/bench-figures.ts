// What a benchmark prints: one JSON object of figures, every leaf a finite number (counts, rates,
// milliseconds, ratios; a yes/no is 1/0). The benchmarks check it before printing
// (bench/lib/report.ts), and npm test's bench smoke stage checks what they printed (pure).

/** Paths of the leaves that are not finite numbers (null, NaN, a string, a boolean), and of empty objects or lists. */
export function figureProblems(value: unknown, at = ""): string[] {
  const here = at || "(the report)";
  if (typeof value === "number") return Number.isFinite(value) ? [] : [`${here}: ${value} is not a finite number`];
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${here}: an empty list`];
    return value.flatMap((v, i) => figureProblems(v, `${at}[${i}]`));
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return [`${here}: an empty object`];
    return entries.flatMap(([k, v]) => figureProblems(v, at ? `${at}.${k}` : k));
  }
  return [`${here}: ${value === undefined ? "missing" : JSON.stringify(value)} is not a number`];
}

/**
 * The benchmark's report in what it wrote to stdout: the last JSON object that starts at the
 * beginning of a line and runs to the end of the output (whatever came before it, a build's
 * progress say, is not part of it). Throws when there is none.
 */
export function benchReportIn(stdout: string): Record<string, unknown> {
  const lines = stdout.trimEnd().split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.startsWith("{")) continue;
    try {
      const parsed: unknown = JSON.parse(lines.slice(i).join("\n"));
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      /* an object that does not run to the end: look further up */
    }
  }
  throw new Error("no JSON report at the end of the output");
}
