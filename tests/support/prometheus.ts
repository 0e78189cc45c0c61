// A strict reader of the Prometheus text exposition format (0.0.4), for tests: every sample must
// belong to a metric with a TYPE line, names and label names must be valid, values numbers.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** samples of a metric family (histograms include their _bucket, _sum and _count) */
  of(name: string): Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const [n, line] of text.split("\n").entries()) {
    if (!line.trim()) continue;
    if (line.startsWith("# TYPE ")) {
      const [, , name, type] = line.split(" ");
      if (!NAME.test(name!)) throw new Error(`line ${n + 1}: bad metric name ${name}`);
      types.set(name!, type!);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( \d+)?$/.exec(line);
    if (!m) throw new Error(`line ${n + 1}: not a sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? "").matchAll(/([^=,]+)="((?:[^"\\]|\\.)*)"/g)) {
      if (!LABEL.test(l[1]!)) throw new Error(`line ${n + 1}: bad label name ${l[1]}`);
      labels[l[1]!] = l[2]!.replace(/\\"/g, '"').replace(/\\n/g, "\n").replace(/\\\\/g, "\\");
    }
    // values are read as Go's ParseFloat reads them: NaN and Inf in any case (prom-client writes `Nan`)
    const special = m[4]!.toLowerCase();
    const value =
      special === "+inf" || special === "inf" ? Infinity : special === "-inf" ? -Infinity : special === "nan" ? NaN : Number(m[4]);
    if (Number.isNaN(value) && special !== "nan") throw new Error(`line ${n + 1}: bad value ${m[4]}`);
    const family = m[1]!.replace(/_(bucket|sum|count)$/, "");
    if (!types.has(m[1]!) && !types.has(family)) throw new Error(`line ${n + 1}: ${m[1]} has no TYPE line`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { types, samples, of: (name) => samples.filter((s) => s.name === name || s.name.replace(/_(bucket|sum|count)$/, "") === name) };
}
