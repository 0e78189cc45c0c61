// Slurm's host lists (`gpu[01-04,07],login1`, `rack[1-2]-n[1-3]`), expanded and compressed. Pure.
// Expansion is bounded: a list naming more hosts than `limit` is refused rather than built, so a
// malformed or hostile line can never make the bridge allocate without end.

export class HostlistError extends Error {}

/** Splits at commas outside brackets. */
function topLevel(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === "[") depth++;
    else if (c === "]") {
      depth--;
      if (depth < 0) throw new HostlistError(`unbalanced ] in ${list}`);
    } else if (c === "," && depth === 0) {
      out.push(list.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw new HostlistError(`unbalanced [ in ${list}`);
  out.push(list.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

function expandRange(range: string, limit: number): string[] {
  const out: string[] = [];
  for (const part of range.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new HostlistError(`not a range: ${part}`);
    const [from, to] = [m[1]!, m[2] ?? m[1]!];
    const width = from.length;
    const [a, b] = [Number(from), Number(to)];
    if (b < a) throw new HostlistError(`descending range ${part}`);
    if (b - a + 1 + out.length > limit) throw new HostlistError(`more than ${limit} hosts`);
    for (let n = a; n <= b; n++) out.push(String(n).padStart(width, "0"));
  }
  return out;
}

/** Every host a Slurm host list names, in order. */
export function expandHostlist(list: string, limit = 100_000): string[] {
  const text = list.trim();
  if (!text || text === "(null)" || text === "None" || text === "N/A") return [];
  const hosts: string[] = [];
  for (const item of topLevel(text)) {
    // each bracket group multiplies: rack[1-2]-n[1-3] is six hosts
    let names = [""];
    let rest = item;
    while (rest.length) {
      const open = rest.indexOf("[");
      if (open < 0) {
        names = names.map((n) => n + rest);
        break;
      }
      const close = rest.indexOf("]", open);
      if (close < 0) throw new HostlistError(`unbalanced [ in ${item}`);
      const prefix = rest.slice(0, open);
      const values = expandRange(rest.slice(open + 1, close), limit);
      if (names.length * values.length + hosts.length > limit) throw new HostlistError(`more than ${limit} hosts`);
      names = names.flatMap((n) => values.map((v) => n + prefix + v));
      rest = rest.slice(close + 1);
    }
    hosts.push(...names);
    if (hosts.length > limit) throw new HostlistError(`more than ${limit} hosts`);
  }
  return hosts;
}

/** A short host list for a command line (`n[1-3,5]`), grouping hosts that differ in a trailing number. */
export function compressHostlist(hosts: readonly string[]): string {
  const groups = new Map<string, Array<{ n: number; text: string }>>();
  const singles: string[] = [];
  for (const h of hosts) {
    const m = /^(.*?)(\d+)$/.exec(h);
    if (!m || m[1]!.includes("[")) {
      singles.push(h);
      continue;
    }
    const key = `${m[1]}\u0000${m[2]!.length}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push({ n: Number(m[2]), text: m[2]! });
  }
  const parts: string[] = [];
  for (const [key, items] of groups) {
    const prefix = key.split("\u0000")[0]!;
    const sorted = [...new Map(items.map((i) => [i.n, i])).values()].sort((a, b) => a.n - b.n);
    if (sorted.length === 1) {
      parts.push(prefix + sorted[0]!.text);
      continue;
    }
    const ranges: string[] = [];
    for (let i = 0; i < sorted.length;) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1]!.n === sorted[j]!.n + 1) j++;
      ranges.push(i === j ? sorted[i]!.text : `${sorted[i]!.text}-${sorted[j]!.text}`);
      i = j + 1;
    }
    parts.push(`${prefix}[${ranges.join(",")}]`);
  }
  return [...parts, ...singles].join(",");
}
