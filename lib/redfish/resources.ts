import type { QuirkId } from "./quirks";

// Reading Redfish resources (pure): links, tasks, which ResetType to send for a power action, which
// boot target means "the virtual CD", which virtual media device takes a CD image. Written from
// DSP0266 and the ComputerSystem, Manager, VirtualMedia, Task and ActionInfo schemas.

export type Json = Record<string, unknown>;

/** A member as text: strings and numbers as they are, anything else as its JSON (a BMC may send anything). */
export function text(v: unknown, fallback = ""): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return v === null || v === undefined ? fallback : JSON.stringify(v);
}

/** The `@odata.id` of a link object (`{"@odata.id": "/redfish/v1/…"}`), or undefined. */
export function odataId(link: unknown): string | undefined {
  const id = (link as { "@odata.id"?: unknown } | undefined)?.["@odata.id"];
  return typeof id === "string" && id.length > 0 ? id : undefined;
}

/** The link objects of an array property (`Members`, `Links.ManagedBy`, …) as paths. */
export function odataIds(list: unknown): string[] {
  return Array.isArray(list) ? list.map(odataId).filter((x): x is string => x !== undefined) : [];
}

const sameResource = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
export { sameResource };

// ---------------------------------------------------------------- tasks

const TASK_RUNNING = new Set(["New", "Starting", "Running", "Suspended", "Interrupted", "Pending", "Stopping", "Service", "Cancelling"]);
const TASK_FAILED = new Set(["Killed", "Exception", "Cancelled"]);

export function isTask(json: unknown): json is Json {
  const t = (json as Json | undefined)?.["@odata.type"];
  return typeof t === "string" && t.startsWith("#Task.") && typeof (json as Json).TaskState === "string";
}

export type TaskOutcome = { state: "running"; percent?: number } | { state: "completed" } | { state: "failed"; why: string };

/** Where a Task stands: running, completed (TaskStatus not Critical), or failed with its messages. */
export function taskOutcome(task: Json): TaskOutcome {
  const state = text(task.TaskState);
  const id = text(task.Id);
  const messages = Array.isArray(task.Messages)
    ? (task.Messages as Json[])
        .map((m) => m.Message ?? m.MessageId)
        .filter((x): x is string => typeof x === "string")
        .join(" ")
    : "";
  if (TASK_RUNNING.has(state))
    return { state: "running", ...(typeof task.PercentComplete === "number" ? { percent: task.PercentComplete } : {}) };
  if (TASK_FAILED.has(state)) return { state: "failed", why: `task ${id} ended ${state}${messages ? `: ${messages}` : ""}` };
  if (state === "Completed" && task.TaskStatus === "Critical")
    return { state: "failed", why: `task ${id} completed with status Critical${messages ? `: ${messages}` : ""}` };
  if (state === "Completed") return { state: "completed" };
  return { state: "failed", why: `task ${id} is in an unknown state ${state}` };
}

// ---------------------------------------------------------------- power

export type PowerAction = "on" | "off" | "restart";

/** What each action may be sent as, in order of preference (what Ironic's redfish driver sends first). */
const RESET_PREFERENCE: Record<PowerAction, readonly string[]> = {
  on: ["On", "ForceOn", "PushPowerButton"],
  off: ["ForceOff", "GracefulShutdown", "PushPowerButton"],
  restart: ["ForceRestart", "GracefulRestart", "PowerCycle"],
};

/** The standard ResetType values, assumed when the BMC lists none (quirk reset_allowable_values_missing). */
export const STANDARD_RESET_TYPES = [
  "On",
  "ForceOff",
  "GracefulShutdown",
  "GracefulRestart",
  "ForceRestart",
  "Nmi",
  "ForceOn",
  "PushPowerButton",
  "PowerCycle",
] as const;

/** The Reset action's target and the ResetType values the system lists inline (null: none listed). */
export function resetAction(system: Json): { target: string; allowed: string[] | null; actionInfo?: string } | null {
  const a = (system.Actions as Json | undefined)?.["#ComputerSystem.Reset"] as Json | undefined;
  if (!a || typeof a.target !== "string") return null;
  const inline = a["ResetType@Redfish.AllowableValues"];
  return {
    target: a.target,
    allowed: Array.isArray(inline) ? inline.filter((x): x is string => typeof x === "string") : null,
    ...(typeof a["@Redfish.ActionInfo"] === "string" ? { actionInfo: a["@Redfish.ActionInfo"] } : {}),
  };
}

/** The AllowableValues of a parameter in an ActionInfo resource (null: the parameter lists none). */
export function actionInfoValues(info: Json, parameter: string): string[] | null {
  const p = Array.isArray(info.Parameters) ? (info.Parameters as Json[]).find((x) => x.Name === parameter) : undefined;
  return Array.isArray(p?.AllowableValues) ? (p.AllowableValues as unknown[]).filter((x): x is string => typeof x === "string") : null;
}

/** The ResetType to send for an action, or null when the BMC allows none of ours. */
export function chooseResetType(action: PowerAction, allowed: readonly string[]): string | null {
  return RESET_PREFERENCE[action].find((t) => allowed.includes(t)) ?? null;
}

/** The PowerState an action ends in. */
export const POWER_TARGET: Record<PowerAction, "On" | "Off"> = { on: "On", off: "Off", restart: "On" };

// ---------------------------------------------------------------- boot

export interface BootChoice {
  target: string;
  quirk?: QuirkId;
}

/** The boot target that means "the virtual CD" on this system: Cd, or UsbCd where the BMC presents it so. */
export function chooseCdBootTarget(system: Json): BootChoice | null {
  const boot = (system.Boot as Json | undefined) ?? {};
  const raw = boot["BootSourceOverrideTarget@Redfish.AllowableValues"];
  const allowed = Array.isArray(raw) ? raw.filter((x): x is string => typeof x === "string") : null;
  if (!allowed) return { target: "Cd" };
  const manufacturer = typeof system.Manufacturer === "string" ? system.Manufacturer.toLowerCase() : "";
  if (manufacturer === "supermicro" && allowed.includes("UsbCd")) return { target: "UsbCd", quirk: "supermicro_usb_cd" };
  if (allowed.includes("Cd")) return { target: "Cd" };
  if (allowed.includes("UsbCd")) return { target: "UsbCd", quirk: "cd_target_missing" };
  return null;
}

/** The settings resource a system asks Boot changes to go through (`@Redfish.Settings.SettingsObject`), if any. */
export function settingsObject(resource: Json): string | undefined {
  return odataId((resource["@Redfish.Settings"] as Json | undefined)?.SettingsObject);
}

// ---------------------------------------------------------------- virtual media

const CD_TYPES = ["CD", "DVD"];

/** Whether a VirtualMedia device takes CD/DVD images, and the quirk used to tell when it does not say. */
export function cdCapable(media: Json): { ok: boolean; quirk?: QuirkId } {
  const types = media.MediaTypes;
  if (Array.isArray(types) && types.length > 0) return { ok: types.some((t) => typeof t === "string" && CD_TYPES.includes(t)) };
  const label = `${text(media.Id)} ${text(media.Name)}`;
  return /\b(cd|dvd)\d*\b/i.test(label) ? { ok: true, quirk: "media_types_missing" } : { ok: false };
}

export function mediaAction(media: Json, name: "InsertMedia" | "EjectMedia"): string | undefined {
  const a = (media.Actions as Json | undefined)?.[`#VirtualMedia.${name}`] as Json | undefined;
  return typeof a?.target === "string" ? a.target : undefined;
}

/** Whether a device shows this image inserted (BMCs may echo the URL or only its file name). */
export function showsImage(media: Json, image: string): boolean {
  if (media.Inserted === false) return false;
  const shown = typeof media.Image === "string" ? media.Image : "";
  const name = typeof media.ImageName === "string" ? media.ImageName : "";
  const file = image.split("?")[0]!.split("/").pop() ?? image;
  return shown === image || (shown !== "" && (image.endsWith(shown) || shown.endsWith(file))) || name === file;
}

export function isEmptyMedia(media: Json): boolean {
  return media.Inserted !== true && (media.Image === null || media.Image === undefined || media.Image === "");
}
