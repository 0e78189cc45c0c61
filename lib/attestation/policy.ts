import { z } from "zod";
import { EVENT_TYPES, initialPcr } from "./event-log";
import { failure, type Failure } from "./failures";

// Attestation policies: the operator's reference values a node's evidence is compared with. A
// policy is named and versioned (each change is a new version; verdicts name the version they were
// checked against). Its sections:
//
//   pcr_bank  the PCR bank quoted and compared: "sha256" (the only one verified here)
//   pcrs      reference values, PCR index → hex digest; the quote must cover every PCR listed
//   require   the evidence sections a node must send besides its quote: "event_log",
//             "wipe_report", "gpu_reports". An explicit list, possibly empty: never defaulted
//   events    the measured boot events the policy knows (PCR + digest); required when the event log
//             is: every measured event of the log must be one of them
//   gpu       the driver (and VBIOS) versions GPUs may report; required when gpu_reports is. These
//             are the agent's claims from nvidia-smi, not hardware-signed evidence: NVIDIA's remote
//             attestation service (signed GPU reports) is out of reach here, so the check is a model
//             of it, and optional
//   images    node images this policy is the reference for (nodes provisioned with one of them are
//             checked against it rather than their cluster's policy)
//
// A policy without a section it must have is refused when written (400 naming the section), and a
// stored one that lacks it fails every verdict checked against it: never read as "off".

export const EVIDENCE_SECTIONS = ["event_log", "wipe_report", "gpu_reports"] as const;
export type EvidenceSection = (typeof EVIDENCE_SECTIONS)[number];

const hexDigest = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, "must be a SHA-256 digest: 64 hex digits")
  .transform((v) => v.replace(/^0x/, "").toLowerCase());
const pcrIndex = z.string().regex(/^(?:[0-9]|1[0-9]|2[0-3])$/, "must be a PCR index, 0 to 23");
const version = z.string().trim().min(1).max(64);

const policyEvent = z.object({
  pcr: z.number().int().min(0).max(23),
  digest: hexDigest,
  type: z
    .string()
    .refine((t) => Object.hasOwn(EVENT_TYPES, t), "must be a TCG event type name, e.g. EV_EFI_BOOT_SERVICES_APPLICATION")
    .optional(),
  description: z.string().max(200).optional(),
});

/** The sections of a policy version, as zod fields (create and update bodies add their own beside them). */
export const policySections = {
  pcr_bank: z.literal("sha256", { error: 'only the "sha256" bank is verified' }),
  pcrs: z.record(pcrIndex, hexDigest).refine((p) => Object.keys(p).length > 0, "must list at least one PCR's reference value"),
  require: z
    .array(z.enum(EVIDENCE_SECTIONS))
    .max(EVIDENCE_SECTIONS.length)
    .refine((r) => new Set(r).size === r.length, "must not list a section twice"),
  events: z.array(policyEvent).min(1).max(4096).optional(),
  gpu: z
    .object({
      driver_versions: z.array(version).min(1).max(64),
      vbios_versions: z.array(version).min(1).max(256).optional(),
    })
    .strict()
    .optional(),
  images: z.array(z.string().trim().min(1).max(2048)).max(64).optional(),
};

/** The checks between sections: a required section of evidence needs the section that judges it. */
export function checkPolicySections(p: { require: readonly EvidenceSection[]; events?: unknown; gpu?: unknown }, ctx: z.RefinementCtx) {
  if (p.require.includes("event_log") && !p.events) {
    ctx.addIssue({ code: "custom", path: ["events"], message: "a policy that requires the event log must list the events it knows" });
  }
  if (p.require.includes("gpu_reports") && !p.gpu) {
    ctx.addIssue({ code: "custom", path: ["gpu"], message: "a policy that requires GPU reports must say which driver versions it allows" });
  }
}

export const policyBodySchema = z.strictObject(policySections).superRefine(checkPolicySections);
export type PolicyBody = z.output<typeof policyBodySchema>;

/** A policy ready for the verifier: parsed once, its lookups built, never re-read per PCR. */
export interface CompiledPolicy {
  id: string;
  name: string;
  version: number;
  bank: "sha256";
  /** reference values by PCR */
  pcrs: Map<number, string>;
  require: ReadonlySet<EvidenceSection>;
  /** known events: `${pcr}:${digest}` */
  events: ReadonlySet<string> | null;
  gpu: { driver: ReadonlySet<string>; vbios: ReadonlySet<string> | null } | null;
}

export interface StoredPolicy {
  id: string;
  name: string;
  version: number;
  body: unknown;
}

/** Compiles a stored policy; a body that does not pass the schema is the failures it causes, never a policy with parts off. */
export function compilePolicy(p: StoredPolicy): { ok: true; policy: CompiledPolicy } | { ok: false; failures: Failure[] } {
  const parsed = policyBodySchema.safeParse(p.body);
  if (!parsed.success) {
    return {
      ok: false,
      failures: parsed.error.issues.map((i) => {
        const section = String(i.path[0] ?? "(root)");
        const body = p.body && typeof p.body === "object" ? (p.body as Record<string, unknown>) : {};
        const missing = i.path.length === 1 && body[section] === undefined;
        return failure(
          missing ? "policy.section.missing" : "policy.section.invalid",
          `Policy ${p.name} v${p.version}: ${missing ? `has no ${section} section` : `${i.path.join(".") || "(root)"}: ${i.message}`}`,
        );
      }),
    };
  }
  const b = parsed.data;
  return {
    ok: true,
    policy: {
      id: p.id,
      name: p.name,
      version: p.version,
      bank: b.pcr_bank,
      pcrs: new Map(Object.entries(b.pcrs).map(([k, v]) => [Number(k), v])),
      require: new Set(b.require),
      events: b.events ? new Set(b.events.map((e) => `${e.pcr}:${e.digest}`)) : null,
      gpu: b.gpu ? { driver: new Set(b.gpu.driver_versions), vbios: b.gpu.vbios_versions ? new Set(b.gpu.vbios_versions) : null } : null,
    },
  };
}

/** The PCRs the boot event log of the PC Client profile records (SRTM): quoted whenever the log is required, so it is replayed against them. */
export const FIRMWARE_PCRS = [0, 1, 2, 3, 4, 5, 6, 7] as const;

/** The PCRs a node must quote for a policy, ascending: what the nonce tells the agent to select. */
export function pcrSelectionOf(p: Pick<CompiledPolicy, "pcrs" | "require">): number[] {
  const all = new Set([...p.pcrs.keys(), ...(p.require.has("event_log") ? FIRMWARE_PCRS : [])]);
  return [...all].sort((a, b) => a - b);
}

/**
 * A policy body whose reference values are what a known-good boot measured: the PCRs its event log
 * replays to, and every event it measured. How an operator captures a golden policy from a node
 * they trust (and how the demo and the tests make theirs).
 */
export function referencePolicyFromLog(
  log: { events: ReadonlyArray<{ pcr: number; type: number; digests: { sha256?: string }; data: string }>; startupLocality: number },
  replayed: ReadonlyMap<number, Buffer>,
  opts: { pcrs?: readonly number[]; require: EvidenceSection[]; gpu?: PolicyBody["gpu"]; images?: string[] },
): PolicyBody {
  const pcrs = opts.pcrs ?? FIRMWARE_PCRS;
  const measured = log.events.filter((e) => e.type !== 0x3 && e.digests.sha256);
  const seen = new Set<string>();
  const events = measured.flatMap((e) => {
    const key = `${e.pcr}:${e.digests.sha256}`;
    if (seen.has(key)) return [];
    seen.add(key);
    const type = Object.entries(EVENT_TYPES).find(([, v]) => v === e.type)?.[0];
    return [{ pcr: e.pcr, digest: e.digests.sha256!, ...(type ? { type } : {}), ...(e.data ? { description: e.data.slice(0, 200) } : {}) }];
  });
  return policyBodySchema.parse({
    pcr_bank: "sha256",
    pcrs: Object.fromEntries(pcrs.map((p) => [String(p), (replayed.get(p) ?? initialPcr(p, 32, log.startupLocality)).toString("hex")])),
    require: opts.require,
    ...(events.length ? { events } : {}),
    ...(opts.gpu ? { gpu: opts.gpu } : {}),
    ...(opts.images ? { images: opts.images } : {}),
  });
}
