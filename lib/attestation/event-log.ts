import { createHash } from "node:crypto";
import { DIGEST_SIZE, HASH_NAME, StructureError, TPM_ALG, type HashName } from "./tpm-structures";

// The TCG PC Client Platform Firmware Profile's boot event log in its crypto-agile form, as Linux
// exposes it at /sys/kernel/security/tpm0/binary_bios_measurements: a first event in the SHA-1
// format (TCG_PCClientPCREvent) whose body is the "Spec ID Event03" naming the digest sizes, then
// TCG_PCR_EVENT2 records, each with a digest per bank. The log is little-endian. Pure: bytes in,
// events and replayed PCR values out. Replaying extends each measured event's digest into its
// PCR the way the TPM did (PCR ← H(PCR ‖ digest)); EV_NO_ACTION events are not measured.

export const EV_NO_ACTION = 0x00000003;
const SPEC_ID_SIGNATURE = "Spec ID Event03\0";
const STARTUP_LOCALITY_SIGNATURE = "StartupLocality\0";

/** Event types of the PC Client profile and UEFI, for display. */
const EVENT_TYPE_NAMES: Record<number, string> = {
  0x0: "EV_PREBOOT_CERT",
  0x1: "EV_POST_CODE",
  0x2: "EV_UNUSED",
  0x3: "EV_NO_ACTION",
  0x4: "EV_SEPARATOR",
  0x5: "EV_ACTION",
  0x6: "EV_EVENT_TAG",
  0x7: "EV_S_CRTM_CONTENTS",
  0x8: "EV_S_CRTM_VERSION",
  0x9: "EV_CPU_MICROCODE",
  0xa: "EV_PLATFORM_CONFIG_FLAGS",
  0xb: "EV_TABLE_OF_DEVICES",
  0xc: "EV_COMPACT_HASH",
  0xd: "EV_IPL",
  0xe: "EV_IPL_PARTITION_DATA",
  0xf: "EV_NONHOST_CODE",
  0x10: "EV_NONHOST_CONFIG",
  0x11: "EV_NONHOST_INFO",
  0x12: "EV_OMIT_BOOT_DEVICE_EVENTS",
  0x80000001: "EV_EFI_VARIABLE_DRIVER_CONFIG",
  0x80000002: "EV_EFI_VARIABLE_BOOT",
  0x80000003: "EV_EFI_BOOT_SERVICES_APPLICATION",
  0x80000004: "EV_EFI_BOOT_SERVICES_DRIVER",
  0x80000005: "EV_EFI_RUNTIME_SERVICES_DRIVER",
  0x80000006: "EV_EFI_GPT_EVENT",
  0x80000007: "EV_EFI_ACTION",
  0x80000008: "EV_EFI_PLATFORM_FIRMWARE_BLOB",
  0x80000009: "EV_EFI_HANDOFF_TABLES",
  0x8000000a: "EV_EFI_PLATFORM_FIRMWARE_BLOB2",
  0x8000000b: "EV_EFI_HANDOFF_TABLES2",
  0x8000000c: "EV_EFI_VARIABLE_BOOT2",
  0x80000010: "EV_EFI_HCRTM_EVENT",
  0x800000e0: "EV_EFI_VARIABLE_AUTHORITY",
  0x800000e1: "EV_EFI_SPDM_FIRMWARE_BLOB",
  0x800000e2: "EV_EFI_SPDM_FIRMWARE_CONFIG",
};
export const EVENT_TYPES: Record<string, number> = Object.fromEntries(Object.entries(EVENT_TYPE_NAMES).map(([k, v]) => [v, Number(k)]));

export const eventTypeName = (t: number) => EVENT_TYPE_NAMES[t] ?? `0x${t.toString(16).padStart(8, "0")}`;

export interface LogEvent {
  /** position in the log, 0 for the Spec ID event */
  index: number;
  pcr: number;
  type: number;
  /** hex digest per bank name the event carries */
  digests: Partial<Record<HashName, string>>;
  /** the event's data (a string when it is printable, else hex, cut to 256 characters) */
  data: string;
}

export interface EventLog {
  /** the banks the log's Spec ID event declares, with their digest sizes */
  banks: Array<{ alg: number; name: HashName | null; size: number }>;
  /** the locality the platform started in (a StartupLocality event), 0 without one */
  startupLocality: number;
  events: LogEvent[];
}

const MAX_EVENTS = 20_000;
const MAX_EVENT_DATA = 1024 * 1024;

class LeReader {
  at = 0;
  constructor(private readonly buf: Buffer) {}
  need(n: number, field: string) {
    if (this.at + n > this.buf.length) throw new StructureError(`the event log ends inside ${field} at offset ${this.at}`);
  }
  u8(field: string) {
    this.need(1, field);
    return this.buf.readUInt8(this.at++);
  }
  u16(field: string) {
    this.need(2, field);
    const v = this.buf.readUInt16LE(this.at);
    this.at += 2;
    return v;
  }
  u32(field: string) {
    this.need(4, field);
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  bytes(n: number, field: string) {
    this.need(n, field);
    const v = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  get done() {
    return this.at >= this.buf.length;
  }
}

const printable = (t: string) => t.length > 0 && /^[\x20-\x7e\t\n\r]*$/.test(t);

/** What an event's data says, for people: the UEFI structures of the profile decoded, text as text, else hex. */
function describeData(type: number, data: Buffer): string {
  const name = EVENT_TYPE_NAMES[type] ?? "";
  try {
    if (name.startsWith("EV_EFI_VARIABLE") && data.length >= 32) {
      const chars = Number(data.readBigUInt64LE(16));
      const size = Number(data.readBigUInt64LE(24));
      if (chars <= 256 && 32 + chars * 2 + size <= data.length) {
        const variable = data.subarray(32, 32 + chars * 2).toString("utf16le");
        const value = data.subarray(32 + chars * 2, 32 + chars * 2 + size);
        return `${variable}${size <= 4 ? ` = ${value.toString("hex")}` : ` (${size} bytes)`}`;
      }
    }
    if (/^EV_EFI_(BOOT|RUNTIME)_SERVICES_(APPLICATION|DRIVER)$/.test(name) && data.length >= 32)
      return `image loaded at 0x${data.readBigUInt64LE(0).toString(16)}, ${data.readBigUInt64LE(8)} bytes`;
    if (name === "EV_EFI_PLATFORM_FIRMWARE_BLOB" && data.length >= 16)
      return `firmware blob at 0x${data.readBigUInt64LE(0).toString(16)}, ${data.readBigUInt64LE(8)} bytes`;
    if (name === "EV_SEPARATOR" && data.length === 4) return data.readUInt32LE(0) === 0 ? "separator" : "separator (an error was logged)";
  } catch {
    // malformed structures are shown as they are
  }
  const text = data.toString("latin1").replace(/\0+$/, "");
  if (printable(text)) return text.slice(0, 256);
  if (data.length % 2 === 0) {
    const wide = data.toString("utf16le").replace(/\0+$/, "");
    if (printable(wide)) return wide.slice(0, 256);
  }
  return data.subarray(0, 128).toString("hex");
}

/** Parses a crypto-agile TCG event log; throws a StructureError saying where it is malformed. */
export function parseEventLog(buf: Buffer): EventLog {
  const r = new LeReader(buf);
  // the first event, in the SHA-1 log format, carries the Spec ID Event
  const pcr0 = r.u32("event 0 pcrIndex");
  const type0 = r.u32("event 0 eventType");
  r.bytes(20, "event 0 digest");
  const size0 = r.u32("event 0 eventSize");
  if (size0 > 64 * 1024) throw new StructureError(`event 0 claims ${size0} bytes`);
  const spec = r.bytes(size0, "the Spec ID event");
  if (pcr0 !== 0 || type0 !== EV_NO_ACTION || spec.subarray(0, 16).toString("latin1") !== SPEC_ID_SIGNATURE) {
    throw new StructureError("the log does not begin with a Spec ID Event03 (it is not a crypto-agile TCG log)");
  }
  const s = new LeReader(spec);
  s.bytes(16, "Spec ID signature");
  s.u32("platformClass");
  s.u8("specVersionMinor");
  s.u8("specVersionMajor");
  s.u8("specErrata");
  s.u8("uintnSize");
  const algs = s.u32("numberOfAlgorithms");
  if (algs < 1 || algs > 16) throw new StructureError(`the Spec ID event declares ${algs} algorithms`);
  const banks: EventLog["banks"] = [];
  for (let i = 0; i < algs; i++) {
    const alg = s.u16(`digestSizes[${i}].algorithmId`);
    const size = s.u16(`digestSizes[${i}].digestSize`);
    if (size < 1 || size > 64) throw new StructureError(`algorithm 0x${alg.toString(16)} declares ${size}-byte digests`);
    if (DIGEST_SIZE[alg] !== undefined && DIGEST_SIZE[alg] !== size) {
      throw new StructureError(`algorithm ${HASH_NAME[alg]} declares ${size}-byte digests (it has ${DIGEST_SIZE[alg]})`);
    }
    banks.push({ alg, name: HASH_NAME[alg] ?? null, size });
  }
  const sizeOf = new Map(banks.map((b) => [b.alg, b.size]));

  const events: LogEvent[] = [{ index: 0, pcr: 0, type: EV_NO_ACTION, digests: {}, data: "Spec ID Event03" }];
  let startupLocality = 0;
  while (!r.done) {
    const index = events.length;
    if (index > MAX_EVENTS) throw new StructureError(`the log has more than ${MAX_EVENTS} events`);
    const pcr = r.u32(`event ${index} pcrIndex`);
    const type = r.u32(`event ${index} eventType`);
    const count = r.u32(`event ${index} digests.count`);
    if (count > 16) throw new StructureError(`event ${index} claims ${count} digests`);
    const digests: LogEvent["digests"] = {};
    for (let d = 0; d < count; d++) {
      const alg = r.u16(`event ${index} digest ${d} hashAlg`);
      const size = sizeOf.get(alg);
      if (size === undefined)
        throw new StructureError(`event ${index} has a digest of algorithm 0x${alg.toString(16)} the Spec ID event does not declare`);
      const digest = r.bytes(size, `event ${index} digest ${d}`);
      const name = HASH_NAME[alg];
      if (name) digests[name] = digest.toString("hex");
    }
    const size = r.u32(`event ${index} eventSize`);
    if (size > MAX_EVENT_DATA) throw new StructureError(`event ${index} claims ${size} bytes of data`);
    const data = r.bytes(size, `event ${index} event data`);
    if (pcr > 23 && type !== EV_NO_ACTION) throw new StructureError(`event ${index} extends PCR ${pcr} (there are 24)`);
    if (type === EV_NO_ACTION && data.subarray(0, 16).toString("latin1") === STARTUP_LOCALITY_SIGNATURE && data.length >= 17) {
      startupLocality = data[16]!;
    }
    events.push({ index, pcr, type, digests, data: describeData(type, data) });
  }
  return { banks, startupLocality, events };
}

/** A PCR's value before anything is measured: zeros, ones for the D-RTM PCRs 17–22, PCR 0 ending in the startup locality. */
export function initialPcr(pcr: number, size: number, startupLocality = 0): Buffer {
  const b = Buffer.alloc(size, pcr >= 17 && pcr <= 22 ? 0xff : 0);
  if (pcr === 0 && startupLocality) b[size - 1] = startupLocality;
  return b;
}

/** The values the log's measured events give the PCRs of one bank (PCRs no event touches are left out). */
export function replay(log: EventLog, bank: HashName = "sha256"): Map<number, Buffer> {
  const size = DIGEST_SIZE[TPM_ALG[bank]]!;
  const pcrs = new Map<number, Buffer>();
  for (const e of log.events) {
    if (e.type === EV_NO_ACTION) continue;
    const d = e.digests[bank];
    if (d === undefined) continue;
    const before = pcrs.get(e.pcr) ?? initialPcr(e.pcr, size, log.startupLocality);
    pcrs.set(e.pcr, createHash(bank).update(before).update(Buffer.from(d, "hex")).digest());
  }
  return pcrs;
}

/** The measured events of the log that carry no digest in the bank (the log cannot vouch for them there). */
export function eventsWithoutBank(log: EventLog, bank: HashName): LogEvent[] {
  return log.events.filter((e) => e.type !== EV_NO_ACTION && e.digests[bank] === undefined);
}

export interface BuiltEvent {
  pcr: number;
  type: number;
  /** the event's data as the log holds it */
  data: Buffer;
  /** what was measured, when it is not the data itself (a boot application's image): its digests are the event's */
  measured?: Buffer;
}

/**
 * Builds a crypto-agile log with SHA-1 and SHA-256 digests of what each event measured (what
 * firmware writes; tests and the simulator build boot logs with it). A SHA-256 digest may be given
 * outright (a test forging a log).
 */
export function buildEventLog(events: ReadonlyArray<BuiltEvent & { sha256?: Buffer }>, opts: { startupLocality?: number } = {}): Buffer {
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    return b;
  };
  const u16 = (v: number) => {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(v);
    return b;
  };
  const spec = Buffer.concat([
    Buffer.from(SPEC_ID_SIGNATURE, "latin1"),
    u32(0), // platformClass: client
    Buffer.from([0, 2, 0, 2]), // spec 2.0, errata 0, uintnSize 2 (UINT64)
    u32(2),
    u16(TPM_ALG.sha1),
    u16(20),
    u16(TPM_ALG.sha256),
    u16(32),
    Buffer.from([0]), // no vendor info
  ]);
  const parts: Buffer[] = [u32(0), u32(EV_NO_ACTION), Buffer.alloc(20), u32(spec.length), spec];
  const event2 = (pcr: number, type: number, sha1: Buffer, sha256: Buffer, data: Buffer) =>
    parts.push(u32(pcr), u32(type), u32(2), u16(TPM_ALG.sha1), sha1, u16(TPM_ALG.sha256), sha256, u32(data.length), data);
  if (opts.startupLocality !== undefined) {
    const data = Buffer.concat([Buffer.from(STARTUP_LOCALITY_SIGNATURE, "latin1"), Buffer.from([opts.startupLocality])]);
    event2(0, EV_NO_ACTION, Buffer.alloc(20), Buffer.alloc(32), data);
  }
  for (const e of events) {
    const measured = e.measured ?? e.data;
    const sha256 = e.sha256 ?? createHash("sha256").update(measured).digest();
    event2(e.pcr, e.type, createHash("sha1").update(measured).digest(), sha256, e.data);
  }
  return Buffer.concat(parts);
}
