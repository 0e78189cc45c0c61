import { createHash } from "node:crypto";
import { buildEventLog, EVENT_TYPES, type BuiltEvent } from "../../lib/attestation/event-log";

// What a simulated node's firmware measures while it boots (a UEFI machine with Secure Boot, shim,
// GRUB and a Linux kernel), as TCG PC Client events with the UEFI structures the profile defines
// (UEFI_VARIABLE_DATA, UEFI_PLATFORM_FIRMWARE_BLOB, UEFI_IMAGE_LOAD_EVENT), so tpm2-tools'
// tpm2_eventlog reads the log too. The same events every boot, so a policy made from one clean
// boot fits every clean boot; a changed kernel or an implant changes PCR 4 and adds an event the
// policy does not know. Tests boot software TPMs with it, the simulator its nodes.

export interface BootOptions {
  /** the kernel image measured in PCR 4 */
  kernel?: string;
  /** a bootkit loaded before the kernel: one more boot application in PCR 4 */
  implant?: boolean;
}

const SIM_KERNEL = "vmlinuz-6.8.0-45-generic";

const u64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
};

/** EFI_GLOBAL_VARIABLE (8be4df61-93ca-11d2-aa0d-00e098032b8c) in its on-disk (mixed-endian) layout. */
const EFI_GLOBAL_VARIABLE = Buffer.from("61dfe48bca93d211aa0d00e098032b8c", "hex");
/** EFI_IMAGE_SECURITY_DATABASE_GUID (d719b2cb-3d3a-4596-a3bc-dad00e67656f), for db. */
const EFI_IMAGE_SECURITY_DATABASE = Buffer.from("cbb219d73a3d9645a3bcdad00e67656f", "hex");

/** UEFI_VARIABLE_DATA: the variable's GUID and name, and its data. */
function variable(guid: Buffer, name: string, data: Buffer): Buffer {
  const unicode = Buffer.from(name, "utf16le");
  return Buffer.concat([guid, u64(BigInt(name.length)), u64(BigInt(data.length)), unicode, data]);
}

/** UEFI_IMAGE_LOAD_EVENT of an image loaded from disk (no device path); its digest is the image's own. */
function imageLoad(base: bigint, length: bigint): Buffer {
  return Buffer.concat([u64(base), u64(length), u64(0n), u64(0n)]);
}

const ev = (pcr: number, type: keyof typeof EVENT_TYPES, data: Buffer, image?: string): BuiltEvent => ({
  pcr,
  type: EVENT_TYPES[type]!,
  data,
  ...(image ? { measured: Buffer.from(image) } : {}),
});

/** A boot application: its measurement is the (simulated) Authenticode digest of the image, the event says where it was loaded. */
const application = (image: string, at: bigint) => ev(4, "EV_EFI_BOOT_SERVICES_APPLICATION", imageLoad(at, 0x100000n), `PE image ${image}`);

/** The boot's events, in order (each with its data, and its digest where the digest is not of the data). */
function bootEvents(o: BootOptions = {}): BuiltEvent[] {
  const separator = Buffer.alloc(4);
  return [
    ev(0, "EV_S_CRTM_VERSION", Buffer.from("GPUForge simulated firmware 2.14.1\0", "utf16le")),
    ev(0, "EV_EFI_PLATFORM_FIRMWARE_BLOB", Buffer.concat([u64(0xff000000n), u64(0x00c00000n)])),
    ev(1, "EV_EFI_VARIABLE_BOOT", variable(EFI_GLOBAL_VARIABLE, "BootOrder", Buffer.from([0x01, 0x00, 0x00, 0x00]))),
    ev(2, "EV_EFI_BOOT_SERVICES_DRIVER", imageLoad(0x7e000000n, 0x40000n), "PE image Mellanox ConnectX-7 UEFI driver 14.31"),
    ev(7, "EV_EFI_VARIABLE_DRIVER_CONFIG", variable(EFI_GLOBAL_VARIABLE, "SecureBoot", Buffer.from([1]))),
    ev(7, "EV_EFI_VARIABLE_DRIVER_CONFIG", variable(EFI_GLOBAL_VARIABLE, "PK", Buffer.from("GPUForge Platform Key"))),
    ev(7, "EV_EFI_VARIABLE_DRIVER_CONFIG", variable(EFI_GLOBAL_VARIABLE, "KEK", Buffer.from("Microsoft Corporation KEK CA 2011"))),
    ev(7, "EV_EFI_VARIABLE_DRIVER_CONFIG", variable(EFI_IMAGE_SECURITY_DATABASE, "db", Buffer.from("Microsoft UEFI CA 2011"))),
    ...[0, 1, 2, 3, 4, 5, 6, 7].map((pcr) => ev(pcr, "EV_SEPARATOR", separator)),
    ev(4, "EV_EFI_ACTION", Buffer.from("Calling EFI Application from Boot Option")),
    application("shimx64.efi 15.8", 0x6d000000n),
    application("grubx64.efi 2.12", 0x6c000000n),
    ...(o.implant ? [application("bootx64-loader.efi (implant)", 0x6b000000n)] : []),
    application(o.kernel ?? SIM_KERNEL, 0x6a000000n),
  ];
}

/** The boot's event log, as /sys/kernel/security/tpm0/binary_bios_measurements would hold it. */
export function bootEventLog(o: BootOptions = {}): Buffer {
  return buildEventLog(bootEvents(o));
}

/** Measures the boot into a TPM: each event's SHA-256 extended into its PCR, in order (in one go where the TPM can). */
export async function measureBoot(
  tpm: { extend(pcr: number, sha256Hex: string): unknown; extendMany?(events: Array<{ pcr: number; sha256Hex: string }>): Promise<void> },
  o: BootOptions = {},
): Promise<Buffer> {
  const events = bootEvents(o).map((e) => ({
    pcr: e.pcr,
    sha256Hex: createHash("sha256")
      .update(e.measured ?? e.data)
      .digest("hex"),
  }));
  if (tpm.extendMany) await tpm.extendMany(events);
  else for (const e of events) await tpm.extend(e.pcr, e.sha256Hex);
  return bootEventLog(o);
}
