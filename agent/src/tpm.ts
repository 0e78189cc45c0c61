import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

// A node's TPM 2.0, driven through the standard tpm2-tools (tpm2_createek, tpm2_createak,
// tpm2_evictcontrol, tpm2_quote, tpm2_pcrextend): the evidence the control plane verifies is
// exactly what those tools write, so a real node needs nothing but them and this agent. The TCTI
// is the tools' own (TPM2TOOLS_TCTI: the kernel's resource manager /dev/tpmrm0 by default, or a
// software TPM's socket). Without a resource manager (swtpm) transient objects and sessions
// accumulate, so every command is followed by tpm2_flushcontext -t and -s.
//
// The attestation key (AK) is made once, under the endorsement key, and kept at a persistent
// handle (GPUFORGE_TPM_AK_HANDLE, default 0x81010002) so it survives reboots and agent upgrades:
// the control plane pins the first AK a node enrols and refuses another.

const exec = promisify(execFile);

export interface TpmIdentity {
  ak_public_pem: string;
  /** the AK's qualified name (its Name qualified by its parents' up to the hierarchy), hex: what a quote's qualifiedSigner says */
  ak_qualified_name: string;
  ek_public_pem?: string;
}

export interface TpmQuote {
  /** TPMS_ATTEST, as tpm2_quote -m writes it */
  quote: Buffer;
  /** TPMT_SIGNATURE, as tpm2_quote -s writes it */
  signature: Buffer;
  /** the quoted PCR values, as tpm2_quote printed them */
  pcrs: { sha256: Record<string, string> };
}

export interface TpmOptions {
  /** where the AK's public parts and the quotes' files are kept */
  workDir: string;
  /** TPM2TOOLS_TCTI for the tools (default: theirs, /dev/tpmrm0) */
  tcti?: string;
  akHandle?: string;
  /** a command's time limit (default 30 s) */
  timeoutMs?: number;
}

class TpmError extends Error {}

export class Tpm2Tools {
  private readonly handle: string;
  private readonly env: NodeJS.ProcessEnv;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: TpmOptions) {
    this.handle = opts.akHandle ?? "0x81010002";
    this.env = { ...process.env, ...(opts.tcti ? { TPM2TOOLS_TCTI: opts.tcti } : {}) };
    mkdirSync(opts.workDir, { recursive: true, mode: 0o700 });
  }

  private file(name: string) {
    return path.join(this.opts.workDir, name);
  }

  /**
   * One tool, then (for commands that leave transient objects or sessions behind: key creation,
   * loading, quotes) the flushes a TPM without a resource manager needs; commands never overlap.
   */
  private tool(cmd: string, args: string[], flush = true): Promise<string> {
    const next = this.queue.then(async () => {
      try {
        const { stdout } = await exec(cmd, args, { env: this.env, timeout: this.opts.timeoutMs ?? 30_000, maxBuffer: 4 * 1024 * 1024 });
        return stdout;
      } catch (e) {
        const err = e as Error & { stderr?: string };
        throw new TpmError(`${cmd} failed: ${(err.stderr || err.message).trim().split("\n").slice(-2).join(" ")}`);
      } finally {
        if (flush) {
          await exec("tpm2_flushcontext", ["-t"], { env: this.env, timeout: 10_000 }).catch(() => {});
          await exec("tpm2_flushcontext", ["-s"], { env: this.env, timeout: 10_000 }).catch(() => {});
        }
      }
    });
    this.queue = next.catch(() => {});
    return next;
  }

  /** The AK at the persistent handle, made (under a new EK) and persisted the first time. */
  async identity(): Promise<TpmIdentity> {
    const pem = this.file("ak.pem");
    const name = this.file("ak.name");
    const qualified = this.file("ak.qualified-name");
    const read = () => this.tool("tpm2_readpublic", ["-c", this.handle, "-f", "pem", "-o", pem, "-n", name, "-q", qualified], false);
    const exists = await read().then(
      () => true,
      () => false,
    );
    if (!exists) {
      await this.tool("tpm2_createek", ["-c", this.file("ek.ctx"), "-G", "ecc", "-u", this.file("ek.pem"), "-f", "pem"]);
      await this.tool("tpm2_createak", [
        "-C",
        this.file("ek.ctx"),
        "-c",
        this.file("ak.ctx"),
        "-G",
        "ecc",
        "-g",
        "sha256",
        "-s",
        "ecdsa",
        "-u",
        pem,
        "-f",
        "pem",
        "-n",
        name,
      ]);
      await this.tool("tpm2_evictcontrol", ["-C", "o", "-c", this.file("ak.ctx"), this.handle]);
      await read();
    }
    const ek = this.file("ek.pem");
    return {
      ak_public_pem: readFileSync(pem, "utf8"),
      ak_qualified_name: readFileSync(qualified).toString("hex"),
      ...(existsSync(ek) ? { ek_public_pem: readFileSync(ek, "utf8") } : {}),
    };
  }

  /** A quote of the SHA-256 PCRs over the nonce, signed by the AK. */
  async quote(nonceHex: string, pcrs: readonly number[]): Promise<TpmQuote> {
    if (!/^[0-9a-f]{2,128}$/i.test(nonceHex) || nonceHex.length % 2) throw new TpmError(`not a nonce: ${nonceHex}`);
    if (pcrs.length === 0 || pcrs.some((p) => !Number.isInteger(p) || p < 0 || p > 23))
      throw new TpmError(`not a PCR selection: ${pcrs.join(",")}`);
    const msg = this.file("quote.msg");
    const sig = this.file("quote.sig");
    const out = await this.tool("tpm2_quote", [
      "-c",
      this.handle,
      "-l",
      `sha256:${pcrs.join(",")}`,
      "-q",
      nonceHex,
      "-m",
      msg,
      "-s",
      sig,
      // tpm2_quote prints the quoted PCR values only when it also writes them to a file
      "-o",
      this.file("quote.pcrs"),
      "-g",
      "sha256",
    ]);
    return { quote: readFileSync(msg), signature: readFileSync(sig), pcrs: { sha256: parseQuotedPcrs(out) } };
  }

  /** Extends a SHA-256 PCR (what firmware does while it boots; the simulator and tests boot a software TPM this way). */
  async extend(pcr: number, sha256Hex: string): Promise<void> {
    await this.extendMany([{ pcr, sha256Hex }]);
  }

  /** Extends PCRs in order, many in one tpm2_pcrextend (it extends its arguments one after another). */
  async extendMany(events: ReadonlyArray<{ pcr: number; sha256Hex: string }>): Promise<void> {
    for (let i = 0; i < events.length; i += 32)
      await this.tool(
        "tpm2_pcrextend",
        events.slice(i, i + 32).map((e) => `${e.pcr}:sha256=${e.sha256Hex}`),
        false,
      );
  }
}

/** The PCR values tpm2_quote prints (`pcrs:` → `sha256:` → `N : 0x…`). */
function parseQuotedPcrs(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  let inBank = false;
  for (const line of stdout.split("\n")) {
    if (/^\s*sha256\s*:\s*$/.test(line)) {
      inBank = true;
      continue;
    }
    const m = /^\s+(\d+)\s*:\s*0x([0-9A-Fa-f]+)\s*$/.exec(line);
    if (inBank && m) out[m[1]!] = m[2]!.toLowerCase();
    else if (inBank && /^\S/.test(line)) inBank = false;
  }
  return out;
}

/** The kernel's copy of the firmware's boot event log, or null when there is none (no TPM, no permission). */
export function readBootEventLog(file = "/sys/kernel/security/tpm0/binary_bios_measurements"): Buffer | null {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}
