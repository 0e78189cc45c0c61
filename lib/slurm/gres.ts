// Slurm's generic resources (GRES) as its tools print them, for GPUs only. Pure.
//   scontrol show node   Gres=gpu:h100:8(S:0-1)        Gres=gpu:4        Gres=gpu:a100:2,gpu:v100:2
//   sinfo -O GresUsed    gpu:h100:2(IDX:0-1)            gpu:h100:0(IDX:N/A)  gpu:a100:1(IDX:0),gpu:v100:1(IDX:2)
//   squeue %b / scontrol TresPerNode   gres:gpu:h100:1 (22.05)   gres/gpu:h100:1 (23.02 and later)   gres/gpu=2
//   scontrol -d show job per node      GRES=gpu:h100:2(IDX:0-1)
// Other resources (mps, shard, nic, licences) are ignored; an entry that cannot be read is skipped.

export interface GpuGres {
  /** the GRES type (`h100`), or null for an untyped `gpu:4` */
  type: string | null;
  count: number;
  /** the device indices, when Slurm printed them (IDX:0-1,3) */
  indices: number[] | null;
}

/** Splits at commas outside parentheses. */
function entries(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")") depth = Math.max(0, depth - 1);
    else if (text[i] === "," && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

function indicesOf(detail: string): number[] | null {
  const m = /IDX:([^)]*)/.exec(detail);
  if (!m) return null;
  if (/^N\/A$/i.test(m[1]!.trim())) return [];
  const out: number[] = [];
  for (const part of m[1]!.split(",")) {
    const r = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!r) return null;
    const [a, b] = [Number(r[1]), Number(r[2] ?? r[1])];
    if (b < a || b - a > 1024) return null;
    for (let i = a; i <= b; i++) out.push(i);
  }
  return out;
}

/** The GPU entries of a GRES string; anything else in it is left out. */
export function parseGpuGres(text: string | null | undefined): GpuGres[] {
  const t = (text ?? "").trim();
  if (!t || t === "(null)" || t === "N/A" || t === "None") return [];
  const out: GpuGres[] = [];
  for (const entry of entries(t)) {
    const paren = entry.indexOf("(");
    const head = (paren >= 0 ? entry.slice(0, paren) : entry).replace(/^gres[:/]/, "");
    const detail = paren >= 0 ? entry.slice(paren) : "";
    // gpu=2 (TRES form), gpu:2, gpu:h100:2, gpu:h100 (count 1)
    const tres = /^gpu(?::([A-Za-z0-9_.-]+))?=(\d+)$/.exec(head);
    if (tres) {
      out.push({ type: tres[1] ?? null, count: Number(tres[2]), indices: indicesOf(detail) });
      continue;
    }
    const parts = head.split(":");
    if (parts[0] !== "gpu") continue;
    let type: string | null = null;
    let count = 1;
    if (parts.length === 2) {
      if (/^\d+$/.test(parts[1]!)) count = Number(parts[1]);
      else type = parts[1]!;
    } else if (parts.length >= 3) {
      type = parts[1]!;
      if (!/^\d+$/.test(parts[2]!)) continue;
      count = Number(parts[2]);
    }
    if (type !== null && !/^[A-Za-z0-9_.-]{1,64}$/.test(type)) continue;
    if (!Number.isSafeInteger(count) || count < 0 || count > 64) continue;
    out.push({ type, count, indices: indicesOf(detail) });
  }
  return out;
}

/** How many GPUs a GRES string names, all types together. */
export function gpuCount(text: string | null | undefined): number {
  return parseGpuGres(text).reduce((n, g) => n + g.count, 0);
}
