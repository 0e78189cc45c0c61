// TPM 2.0 structures as tpm2_quote writes them (TCG TPM 2.0 Library, Part 2: Structures): the
// TPMS_ATTEST of a quote (`-m`) and its TPMT_SIGNATURE (`-s`). Pure: bytes in, fields out; every
// problem is an error naming what was wrong, never a guess. TPM structures are big-endian.

export const TPM_GENERATED_VALUE = 0xff544347;
export const TPM_ST_ATTEST_QUOTE = 0x8018;

/** Hash algorithms (TPM_ALG_ID) and their digest sizes. */
export const TPM_ALG = { sha1: 0x0004, sha256: 0x000b, sha384: 0x000c, sha512: 0x000d, sm3_256: 0x0012 } as const;
export type HashName = keyof typeof TPM_ALG;
export const DIGEST_SIZE: Record<number, number> = { 0x0004: 20, 0x000b: 32, 0x000c: 48, 0x000d: 64, 0x0012: 32 };
export const HASH_NAME: Record<number, HashName> = {
  0x0004: "sha1",
  0x000b: "sha256",
  0x000c: "sha384",
  0x000d: "sha512",
  0x0012: "sm3_256",
};

/** Signature schemes (TPM_ALG_ID). */
export const TPM_ALG_RSASSA = 0x0014;
export const TPM_ALG_RSAPSS = 0x0016;
export const TPM_ALG_ECDSA = 0x0018;

export class StructureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StructureError";
  }
}

/** A cursor over big-endian bytes that refuses to read past the end. */
class Reader {
  private at = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}
  private need(n: number, field: string) {
    if (this.at + n > this.buf.length)
      throw new StructureError(
        `${this.what} ends inside ${field} (needs ${n} bytes at offset ${this.at}, has ${this.buf.length - this.at})`,
      );
  }
  u8(field: string): number {
    this.need(1, field);
    return this.buf.readUInt8(this.at++);
  }
  u16(field: string): number {
    this.need(2, field);
    const v = this.buf.readUInt16BE(this.at);
    this.at += 2;
    return v;
  }
  u32(field: string): number {
    this.need(4, field);
    const v = this.buf.readUInt32BE(this.at);
    this.at += 4;
    return v;
  }
  u64(field: string): bigint {
    this.need(8, field);
    const v = this.buf.readBigUInt64BE(this.at);
    this.at += 8;
    return v;
  }
  bytes(n: number, field: string): Buffer {
    this.need(n, field);
    const v = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  /** A TPM2B_*: a 16-bit size, then that many bytes. */
  sized(field: string, max = 1024): Buffer {
    const n = this.u16(`${field}.size`);
    if (n > max) throw new StructureError(`${this.what}: ${field} claims ${n} bytes (at most ${max})`);
    return this.bytes(n, field);
  }
  get offset() {
    return this.at;
  }
  get remaining() {
    return this.buf.length - this.at;
  }
}

interface PcrSelection {
  hashAlg: number;
  /** the PCR indices selected, ascending */
  pcrs: number[];
}

export interface QuoteAttest {
  magic: number;
  type: number;
  /** the Name of the key that signed (nameAlg ‖ digest of its public area) */
  qualifiedSigner: Buffer;
  /** the caller's qualifying data: our nonce */
  extraData: Buffer;
  clock: bigint;
  resetCount: number;
  restartCount: number;
  safe: boolean;
  firmwareVersion: bigint;
  pcrSelect: PcrSelection[];
  pcrDigest: Buffer;
}

/** Parses a TPMS_ATTEST (the message tpm2_quote -m writes). Checks nothing but its shape: the verifier checks the values. */
export function parseAttest(buf: Buffer): QuoteAttest {
  const r = new Reader(buf, "TPMS_ATTEST");
  const magic = r.u32("magic");
  const type = r.u16("type");
  const qualifiedSigner = r.sized("qualifiedSigner", 2 + 64);
  const extraData = r.sized("extraData", 64);
  const clock = r.u64("clockInfo.clock");
  const resetCount = r.u32("clockInfo.resetCount");
  const restartCount = r.u32("clockInfo.restartCount");
  const safe = r.u8("clockInfo.safe");
  const firmwareVersion = r.u64("firmwareVersion");
  if (type !== TPM_ST_ATTEST_QUOTE) {
    // not a quote: its attested part has another shape; what there is, is reported as such
    return {
      magic,
      type,
      qualifiedSigner,
      extraData,
      clock,
      resetCount,
      restartCount,
      safe: safe !== 0,
      firmwareVersion,
      pcrSelect: [],
      pcrDigest: Buffer.alloc(0),
    };
  }
  const count = r.u32("attested.quote.pcrSelect.count");
  if (count > 16) throw new StructureError(`TPMS_ATTEST: ${count} PCR banks selected (at most 16)`);
  const pcrSelect: PcrSelection[] = [];
  for (let i = 0; i < count; i++) {
    const hashAlg = r.u16(`pcrSelect[${i}].hash`);
    const size = r.u8(`pcrSelect[${i}].sizeofSelect`);
    if (size > 4) throw new StructureError(`TPMS_ATTEST: pcrSelect[${i}] selects ${size} bytes of PCRs (at most 4)`);
    const bits = r.bytes(size, `pcrSelect[${i}].pcrSelect`);
    const pcrs: number[] = [];
    for (let byte = 0; byte < size; byte++) for (let bit = 0; bit < 8; bit++) if (bits[byte]! & (1 << bit)) pcrs.push(byte * 8 + bit);
    pcrSelect.push({ hashAlg, pcrs });
  }
  const pcrDigest = r.sized("attested.quote.pcrDigest", 64);
  if (r.remaining !== 0) throw new StructureError(`TPMS_ATTEST has ${r.remaining} bytes after its end`);
  return {
    magic,
    type,
    qualifiedSigner,
    extraData,
    clock,
    resetCount,
    restartCount,
    safe: safe !== 0,
    firmwareVersion,
    pcrSelect,
    pcrDigest,
  };
}

export type TpmSignature =
  | { sigAlg: typeof TPM_ALG_ECDSA; hashAlg: number; r: Buffer; s: Buffer }
  | { sigAlg: typeof TPM_ALG_RSASSA | typeof TPM_ALG_RSAPSS; hashAlg: number; sig: Buffer }
  | { sigAlg: number; hashAlg: number; unsupported: true };

/** Parses a TPMT_SIGNATURE (what tpm2_quote -s writes in its default tss format). */
export function parseSignature(buf: Buffer): TpmSignature {
  const r = new Reader(buf, "TPMT_SIGNATURE");
  const sigAlg = r.u16("sigAlg");
  const hashAlg = r.u16("hash");
  let sig: TpmSignature;
  if (sigAlg === TPM_ALG_ECDSA) sig = { sigAlg, hashAlg, r: r.sized("signatureR", 66), s: r.sized("signatureS", 66) };
  else if (sigAlg === TPM_ALG_RSASSA || sigAlg === TPM_ALG_RSAPSS) sig = { sigAlg, hashAlg, sig: r.sized("signature", 512) };
  else return { sigAlg, hashAlg, unsupported: true };
  if (r.remaining !== 0) throw new StructureError(`TPMT_SIGNATURE has ${r.remaining} bytes after its end`);
  return sig;
}

/** The PCR indices of a selection as the TPM's bit mask bytes (3 bytes: PCRs 0–23). */
function selectionBytes(pcrs: readonly number[]): Buffer {
  const b = Buffer.alloc(3);
  for (const p of pcrs) b[p >> 3]! |= 1 << (p & 7);
  return b;
}

/** Serialises a quote's TPMS_ATTEST (the simulated TPM builds its quotes with it; tests edit quotes with it). */
export function serializeAttest(a: Omit<QuoteAttest, "magic" | "type"> & { magic?: number; type?: number }): Buffer {
  const parts: Buffer[] = [];
  const u16 = (v: number) => {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    parts.push(b);
  };
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v);
    parts.push(b);
  };
  const u64 = (v: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(v);
    parts.push(b);
  };
  const sized = (v: Buffer) => (u16(v.length), parts.push(v));
  u32(a.magic ?? TPM_GENERATED_VALUE);
  u16(a.type ?? TPM_ST_ATTEST_QUOTE);
  sized(a.qualifiedSigner);
  sized(a.extraData);
  u64(a.clock);
  u32(a.resetCount);
  u32(a.restartCount);
  parts.push(Buffer.from([a.safe ? 1 : 0]));
  u64(a.firmwareVersion);
  u32(a.pcrSelect.length);
  for (const s of a.pcrSelect) {
    u16(s.hashAlg);
    const bits = selectionBytes(s.pcrs);
    parts.push(Buffer.from([bits.length]), bits);
  }
  sized(a.pcrDigest);
  return Buffer.concat(parts);
}

/** Serialises an ECDSA TPMT_SIGNATURE from r and s. */
export function serializeEcdsaSignature(hashAlg: number, r: Buffer, s: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(TPM_ALG_ECDSA, 0);
  head.writeUInt16BE(hashAlg, 2);
  const size = (v: Buffer) => {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v.length);
    return b;
  };
  return Buffer.concat([head, size(r), r, size(s), s]);
}
