// Reading the GPUs of a node from nvidia-smi, and XID errors from the kernel log. Pure parsing
// functions (tested with recorded outputs of several GPU models) plus thin readers that run the
// commands.

export const BASE_QUERY_FIELDS = [
  "index",
  "uuid",
  "name",
  "memory.total",
  "memory.used",
  "utilization.gpu",
  "temperature.gpu",
  "power.draw",
  "pci.bus_id",
] as const;

/** The hardware signals behind the health score; a driver that does not know a field refuses the whole query, so they come after the base ones. */
const SIGNAL_QUERY_FIELDS = ["driver_version", "ecc.mode.current", "ecc.errors.uncorrected.volatile.total"] as const;

export const NVIDIA_SMI_ARGS = [`--query-gpu=${[...BASE_QUERY_FIELDS, ...SIGNAL_QUERY_FIELDS].join(",")}`, "--format=csv,noheader,nounits"];
/** For drivers that refuse the signal fields: the readings without them. */
export const NVIDIA_SMI_BASE_ARGS = [`--query-gpu=${BASE_QUERY_FIELDS.join(",")}`, "--format=csv,noheader,nounits"];
/** Row-remapping failures (Ampere and newer; [N/A] before): a separate query of nvidia-smi's. */
export const NVIDIA_SMI_REMAP_ARGS = ["--query-remapped-rows=gpu_uuid,remapped_rows.failure", "--format=csv,noheader"];

export interface GpuReading {
  index: number;
  uuid: string;
  name: string;
  gpuType: string;
  memoryTotalMb: number;
  memoryUsedMb: number | null;
  utilizationPct: number | null;
  temperatureC: number | null;
  powerDrawW: number | null;
  pciBusId: string | null;
  driverVersion: string | null;
  /** null: the GPU has no ECC (or the driver did not say) */
  eccEnabled: boolean | null;
  /** uncorrected ECC errors since the driver loaded; null when ECC is off or unknown */
  eccUncorrected: number | null;
}

export interface ParseResult {
  gpus: GpuReading[];
  /** lines that could not be read, with why: reported, never fatal for the other GPUs */
  skipped: Array<{ line: number; reason: string }>;
}

const NOT_AVAILABLE = /^\[?(N\/A|Not Supported|Unknown Error|Insufficient Permissions|GPU requires reset)\]?$/i;

function num(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const v = raw.trim();
  if (v === "" || NOT_AVAILABLE.test(v)) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function text(raw: string | undefined): string | null {
  const v = raw?.trim();
  return v && !NOT_AVAILABLE.test(v) ? v : null;
}

/** "NVIDIA H100 80GB HBM3" → "H100"; "NVIDIA A100-SXM4-80GB" → "A100"; "NVIDIA L40S" → "L40S". */
export function gpuTypeFromName(name: string): string {
  const cleaned = name.replace(/^(NVIDIA|Tesla|GeForce|Quadro)\s+/gi, "").trim();
  const known = /\b(GH200|GB200|B200|B100|H200|H100|H800|A100|A800|A40|A30|A10G?|L40S|L40|L4|V100|T4|RTX\s?\d{4}\w*)\b/i.exec(cleaned);
  if (known) return known[1]!.replace(/\s+/g, "").toUpperCase();
  const first = cleaned.split(/[\s-]+/)[0] ?? "GPU";
  return first.replace(/[^A-Za-z0-9._-]/g, "").toUpperCase() || "GPU";
}

export function parseNvidiaSmi(csv: string): ParseResult {
  const gpus: GpuReading[] = [];
  const skipped: ParseResult["skipped"] = [];
  csv.split(/\r?\n/).forEach((rawLine, i) => {
    const line = rawLine.trim();
    if (!line) return;
    const f = line.split(",").map((x) => x.trim());
    const index = num(f[0]);
    const uuid = f[1];
    const name = f[2];
    const memoryTotalMb = num(f[3]);
    if (index === null || !uuid || NOT_AVAILABLE.test(uuid) || !name || memoryTotalMb === null) {
      skipped.push({ line: i + 1, reason: "missing index, uuid, name or memory.total" });
      return;
    }
    gpus.push({
      index,
      uuid,
      name,
      gpuType: gpuTypeFromName(name),
      memoryTotalMb: Math.round(memoryTotalMb),
      memoryUsedMb: num(f[4]) === null ? null : Math.round(num(f[4])!),
      utilizationPct: num(f[5]),
      temperatureC: num(f[6]),
      powerDrawW: num(f[7]),
      pciBusId: f[8] && !NOT_AVAILABLE.test(f[8]) ? normaliseBusId(f[8]) : null,
      driverVersion: text(f[9]),
      eccEnabled: /^enabled$/i.test(f[10] ?? "") ? true : /^disabled$/i.test(f[10] ?? "") ? false : null,
      eccUncorrected: /^disabled$/i.test(f[10] ?? "") ? null : num(f[11]),
    });
  });
  return { gpus, skipped };
}

/** nvidia-smi prints 00000000:3B:00.0, the kernel log 0000:3b:00: compare on bus:device. */
export function normaliseBusId(id: string): string {
  const m = /([0-9a-f]{2}):([0-9a-f]{2})(?:\.[0-9a-f])?$/i.exec(id.trim());
  return m ? `${m[1]!.toLowerCase()}:${m[2]!.toLowerCase()}` : id.trim().toLowerCase();
}

/** Kernel lines like `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.` */
export function parseXidLines(text: string): Array<{ busId: string; xid: number }> {
  const out: Array<{ busId: string; xid: number }> = [];
  for (const m of text.matchAll(/NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)/g)) {
    out.push({ busId: normaliseBusId(m[1]!), xid: Number(m[2]) });
  }
  return out;
}

/**
 * `nvidia-smi --query-remapped-rows=gpu_uuid,remapped_rows.failure`: whether a GPU's memory could
 * not remap a failing row (the GPU needs service). Missing or [N/A] (before Ampere): unknown.
 */
export function parseRemappedRows(csv: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const line of csv.split(/\r?\n/)) {
    const [uuid, raw] = line.split(",").map((x) => x.trim());
    if (!uuid || !raw || NOT_AVAILABLE.test(raw)) continue;
    if (/^(yes|true)$/i.test(raw) || (/^\d+$/.test(raw) && Number(raw) > 0)) out.set(uuid, true);
    else if (/^(no|false|0)$/i.test(raw)) out.set(uuid, false);
  }
  return out;
}

/** The driver and CUDA versions from the header of plain `nvidia-smi`. */
export function parseSmiHeader(text: string): { driverVersion: string | null; cudaVersion: string | null } {
  return {
    driverVersion: /Driver Version:\s*([0-9][0-9.]*)/.exec(text)?.[1] ?? null,
    cudaVersion: /CUDA Version:\s*([0-9][0-9.]*)/.exec(text)?.[1] ?? null,
  };
}
