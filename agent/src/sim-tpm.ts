import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { serializeAttest, serializeEcdsaSignature, TPM_ALG } from "../../lib/attestation/tpm-structures";
import type { TpmIdentity, TpmQuote } from "./tpm";

// A SIMULATED TPM, for simulated nodes where no software TPM (swtpm) is installed, and for the
// soak's thousand nodes, where one swtpm process per node would not fit. It is not a TPM: its
// "attestation key" is an ECDSA P-256 key in a file, so it proves nothing about any machine. It
// speaks the same evidence format a real one does (a TPMS_ATTEST quote, a TPMT_SIGNATURE, SHA-256
// PCRs extended the TPM's way), so the control plane verifies its evidence with the same code, and
// every node using it enrols with tpm_kind "simulated", which the console and every verdict show.

const PCR_COUNT = 24;

export class SimulatedTpm {
  readonly kind = "simulated" as const;
  private readonly key: KeyObject;
  private readonly name: Buffer;
  private pcrs: Buffer[] = [];
  private clock = 0n;
  private resets = 0;

  constructor(stateDir: string) {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const file = path.join(stateDir, "simulated-ak.pem");
    if (!existsSync(file)) {
      const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
      writeFileSync(file, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
    }
    this.key = createPrivateKey(readFileSync(file));
    // a Name the way a TPM makes one (nameAlg ‖ H(public area)); here the area is the key's SPKI
    const spki = createPublicKey(this.key).export({ format: "der", type: "spki" });
    this.name = Buffer.concat([Buffer.from([0x00, 0x0b]), createHash("sha256").update(spki).digest()]);
    this.reboot();
  }

  /** A power cycle: every PCR back to zero. */
  reboot(): void {
    this.pcrs = Array.from({ length: PCR_COUNT }, (_, i) => Buffer.alloc(32, i >= 17 && i <= 22 ? 0xff : 0));
    this.resets++;
  }

  identity(): TpmIdentity {
    return {
      ak_public_pem: createPublicKey(this.key).export({ format: "pem", type: "spki" }).toString(),
      ak_qualified_name: this.name.toString("hex"),
    };
  }

  extend(pcr: number, sha256Hex: string): void {
    this.pcrs[pcr] = createHash("sha256").update(this.pcrs[pcr]!).update(Buffer.from(sha256Hex, "hex")).digest();
  }

  quote(nonceHex: string, pcrs: readonly number[]): TpmQuote {
    const selected = [...new Set(pcrs)].sort((a, b) => a - b);
    const digest = createHash("sha256")
      .update(Buffer.concat(selected.map((p) => this.pcrs[p]!)))
      .digest();
    this.clock += 1000n;
    const quote = serializeAttest({
      qualifiedSigner: this.name,
      extraData: Buffer.from(nonceHex, "hex"),
      clock: this.clock,
      resetCount: this.resets,
      restartCount: 0,
      safe: true,
      firmwareVersion: 0x2019102300163636n,
      pcrSelect: [{ hashAlg: TPM_ALG.sha256, pcrs: selected }],
      pcrDigest: digest,
    });
    const rs = sign("sha256", quote, { key: this.key, dsaEncoding: "ieee-p1363" });
    return {
      quote,
      signature: serializeEcdsaSignature(TPM_ALG.sha256, rs.subarray(0, 32), rs.subarray(32)),
      pcrs: { sha256: Object.fromEntries(selected.map((p) => [String(p), this.pcrs[p]!.toString("hex")])) },
    };
  }
}
