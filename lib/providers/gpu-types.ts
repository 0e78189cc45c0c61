// Providers' GPU names in our vocabulary (the gpu_type jobs ask for), pure. The built-in map reads
// the model out of each provider's naming — RunPod's ids ("NVIDIA H100 80GB HBM3"), Lambda's GPU
// descriptions and type names ("H100 (80 GB SXM5)", "gpu_8x_h100_sxm5"), Vast's gpu_name ("RTX 4090")
// — and the operator's mapping (provider_gpu_mappings) overrides it per provider name, including
// with null: never use that GPU.

const MODELS: Array<[RegExp, string]> = [
  [/\bgh200\b/, "GH200"],
  [/\bb200\b/, "B200"],
  [/\bh200\b/, "H200"],
  [/\bh100\b/, "H100"],
  [/\ba100\b/, "A100"],
  [/\bl40s\b/, "L40S"],
  [/\bl40\b/, "L40"],
  [/\bl4\b/, "L4"],
  [/\ba10g?\b/, "A10"],
  [/\ba40\b/, "A40"],
  [/\b(rtx )?a6000\b/, "A6000"],
  [/\brtx ?6000 ada\b/, "RTX6000ADA"],
  [/\brtx ?5090\b/, "RTX5090"],
  [/\brtx ?4090\b/, "RTX4090"],
  [/\brtx ?3090\b/, "RTX3090"],
  [/\bv100\b/, "V100"],
  [/\bt4\b/, "T4"],
  [/\bmi300x\b/, "MI300X"],
];

/** Our GPU type for a provider's name, by the built-in map; null when it names no model we know. */
export function builtInGpuType(providerGpuType: string): string | null {
  const name = providerGpuType
    .toLowerCase()
    .replace(/[_]+/g, " ")
    .replace(/geforce /g, "");
  for (const [re, ours] of MODELS) if (re.test(name)) return ours;
  return null;
}

/** The operator's mapping first (a null there means "never"), then the built-in one. */
export function mapGpuType(providerGpuType: string, overrides: ReadonlyMap<string, string | null>): string | null {
  if (overrides.has(providerGpuType)) return overrides.get(providerGpuType) ?? null;
  return builtInGpuType(providerGpuType);
}
