// The closed lists of attestation and handover columns (lib/db/closed-columns.ts), without I/O.

export const TPM_KINDS = ["tpm", "swtpm", "simulated"] as const;
export const VERDICT_RESULTS = ["pass", "fail"] as const;
export const ATTESTATION_MODES = ["required", "off"] as const;
export const WIPE_RESULTS = ["ok", "failed"] as const;
