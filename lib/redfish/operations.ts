import type { RedfishClient, Resource } from "./client";
import { patchResource, pollTask, postAction, taskRef, type TaskRef } from "./requests";
import { RedfishError } from "./errors";
import { wantsTransferProtocol, type QuirkId } from "./quirks";
import {
  actionInfoValues,
  cdCapable,
  chooseCdBootTarget,
  chooseResetType,
  isEmptyMedia,
  mediaAction,
  odataId,
  odataIds,
  POWER_TARGET,
  resetAction,
  sameResource,
  settingsObject,
  showsImage,
  STANDARD_RESET_TYPES,
  text,
  type Json,
  type PowerAction,
} from "./resources";

// What provisioning asks of a BMC, each found by following links from the service root: the node's
// ComputerSystem, the Manager that manages it, the CD/DVD virtual media device (on the System or the
// Manager, whichever the BMC offers), power through ComputerSystem.Reset with a ResetType the BMC
// lists, eject and insert, and a one-time boot override. Each operation checks its effect by
// reading the resource again, because a 2xx from a BMC means "accepted", not always "done".

const okStatus = (s: number) => s >= 200 && s < 300;

/** The node's ComputerSystem: the only one, or the one named, or the one whose HostName is the node's. */
export async function discoverSystem(
  c: RedfishClient,
  hint: { systemId?: string | null; hostname?: string | null } = {},
): Promise<Resource> {
  const collection = odataId(c.root.Systems);
  if (!collection) throw new RedfishError("not_supported", "The service root lists no Systems collection");
  const members = await c.members(collection);
  if (members.length === 0) throw new RedfishError("not_supported", "The BMC manages no systems");
  const idOf = (p: string) => p.replace(/\/+$/, "").split("/").pop() ?? p;
  if (hint.systemId) {
    const named = members.find((m) => idOf(m) === hint.systemId || sameResource(m, hint.systemId!));
    if (!named)
      throw new RedfishError("refused", `The BMC has no system ${hint.systemId}; it manages ${members.map(idOf).join(", ")}`, {
        path: collection,
      });
    return c.get(named);
  }
  if (members.length === 1) return c.get(members[0]!);
  const systems = await Promise.all(members.slice(0, 32).map((m) => c.get(m)));
  const host = hint.hostname?.toLowerCase();
  const mine = host ? systems.filter((s) => typeof s.json.HostName === "string" && s.json.HostName.toLowerCase() === host) : [];
  if (mine.length === 1) return mine[0]!;
  throw new RedfishError(
    "not_supported",
    `The BMC manages ${members.length} systems (${members.map(idOf).join(", ")}) and none reports this node's hostname: set system_id to this node's`,
    { path: collection },
  );
}

/** The Manager of the system: its ManagedBy link, else the one whose ManagerForServers lists it, else the only one. */
export async function discoverManager(c: RedfishClient, system: Resource): Promise<Resource | undefined> {
  const managedBy = odataIds((system.json.Links as Json | undefined)?.ManagedBy);
  if (managedBy.length) return c.get(managedBy[0]!);
  const collection = odataId(c.root.Managers);
  if (!collection) return undefined;
  const members = await c.members(collection);
  const managers = await Promise.all(members.slice(0, 32).map((m) => c.get(m)));
  const forMe = managers.find((m) =>
    odataIds((m.json.Links as Json | undefined)?.ManagerForServers).some((s) => sameResource(s, system.path)),
  );
  return forMe ?? (managers.length === 1 ? managers[0] : undefined);
}

export interface CdMedia {
  media: Resource;
  /** which resource offers it */
  on: "System" | "Manager";
  quirk?: QuirkId;
}

/** The first CD/DVD virtual media device, on the System (DSP2046's current home) or else the Manager. */
export async function findCdMedia(c: RedfishClient, system: Resource, manager: Resource | undefined): Promise<CdMedia> {
  const places: Array<[CdMedia["on"], string | undefined]> = [
    ["System", odataId(system.json.VirtualMedia)],
    ["Manager", manager ? odataId(manager.json.VirtualMedia) : undefined],
  ];
  const seen: string[] = [];
  for (const [on, collection] of places) {
    if (!collection) continue;
    for (const path of (await c.members(collection)).slice(0, 16)) {
      const media = await c.get(path);
      seen.push(text(media.json.Id, path));
      const cd = cdCapable(media.json);
      if (cd.ok) return { media, on, ...(cd.quirk ? { quirk: cd.quirk } : {}) };
    }
  }
  throw new RedfishError(
    "not_supported",
    seen.length
      ? `No virtual media device takes CD/DVD images (devices: ${seen.join(", ")})`
      : "The BMC offers no virtual media on the System or its Manager",
  );
}

// ---------------------------------------------------------------- power

async function resetTypes(c: RedfishClient, system: Resource): Promise<{ target: string; allowed: string[]; quirk?: QuirkId }> {
  const a = resetAction(system.json);
  if (!a) throw new RedfishError("not_supported", `${system.path} has no #ComputerSystem.Reset action`, { path: system.path });
  if (a.allowed) return { target: a.target, allowed: a.allowed };
  if (a.actionInfo) {
    const listed = actionInfoValues((await c.get(a.actionInfo)).json, "ResetType");
    if (listed) return { target: a.target, allowed: listed };
  }
  return { target: a.target, allowed: [...STANDARD_RESET_TYPES], quirk: "reset_allowable_values_missing" };
}

export interface PowerOutcome {
  action: PowerAction;
  /** null: nothing was sent (already in that state, or on its way there) */
  reset_type: string | null;
  power_state_before: string | null;
  power_state: string | null;
}

const powerState = (r: Resource): string | null => (typeof r.json.PowerState === "string" ? r.json.PowerState : null);

/** The system's PowerState now (null when the BMC reports none). */
export async function powerStateOf(c: RedfishClient, systemPath: string): Promise<string | null> {
  return powerState(await c.get(systemPath));
}

/** Waits until PowerState shows `want` (a BMC that reports no PowerState is taken at its word). */
async function waitForPowerState(c: RedfishClient, path: string, want: "On" | "Off"): Promise<string | null> {
  const deadline = Date.now() + c.timings.powerTimeoutMs;
  for (;;) {
    const state = await powerStateOf(c, path);
    if (state === want || state === null) return state;
    if (Date.now() + c.timings.powerPollMs > deadline)
      throw new RedfishError(
        "timeout",
        `${path} still shows PowerState ${state} ${Math.round(c.timings.powerTimeoutMs / 1000)} s after the reset`,
        { path },
      );
    await c.pause(c.timings.powerPollMs);
  }
}

/**
 * Sends the reset for a power action with a ResetType the BMC lists (On/ForceOn/…,
 * ForceOff/GracefulShutdown/…, ForceRestart/GracefulRestart/PowerCycle), or nothing when the
 * system is already in that state or on its way there (PoweringOn, PoweringOff). Does not wait.
 */
export async function requestPower(c: RedfishClient, systemPath: string, action: PowerAction): Promise<PowerOutcome> {
  const system = await c.get(systemPath);
  const before = powerState(system);
  const want = POWER_TARGET[action];
  const on = before === "On" || before === "PoweringOn";
  if (action !== "restart" && (before === want || before === `Powering${want}`))
    return { action, reset_type: null, power_state_before: before, power_state: before };
  let act: PowerAction = action;
  let quirk: QuirkId | undefined;
  if (action === "restart" && before === "PoweringOn") return { action, reset_type: null, power_state_before: before, power_state: before };
  if (action === "restart" && !on) {
    act = "on";
    quirk = "restart_when_off";
  }
  const reset = await resetTypes(c, system);
  quirk ??= reset.quirk;
  const type = chooseResetType(act, reset.allowed);
  if (!type)
    throw new RedfishError(
      "not_supported",
      `${system.path} allows ResetType ${reset.allowed.join(", ") || "(none)"}, none of which powers it ${act}`,
      {
        path: system.path,
      },
    );
  const a = await postAction(c, reset.target, { ResetType: type }, quirk);
  if (!okStatus(a.status)) {
    if ((a.status === 400 || a.status === 409) && act !== "restart") {
      const now = powerState(await c.get(systemPath, "reset_refused_in_state"));
      if (now === want || now === `Powering${want}`) return { action, reset_type: type, power_state_before: before, power_state: now };
    }
    c.expect(a, "POST", reset.target);
  }
  return { action, reset_type: type, power_state_before: before, power_state: null };
}

/**
 * Powers the system on, off or restarts it (requestPower), and waits for PowerState to show the
 * result when `wait` is set. A BMC that lists no restart ResetType is powered off, then on.
 */
export async function setPower(
  c: RedfishClient,
  systemPath: string,
  action: PowerAction,
  opts: { wait?: boolean } = {},
): Promise<PowerOutcome> {
  try {
    const out = await requestPower(c, systemPath, action);
    const after = opts.wait ? await waitForPowerState(c, systemPath, POWER_TARGET[action]) : out.power_state;
    return { ...out, power_state: after };
  } catch (e) {
    if (!(e instanceof RedfishError && e.kind === "not_supported" && action === "restart")) throw e;
    await setPower(c, systemPath, "off", { wait: true });
    const on = await setPower(c, systemPath, "on", opts);
    return { ...on, action };
  }
}

// ---------------------------------------------------------------- virtual media

/** Ejects whatever the device holds (nothing to do when it is empty), and checks it is empty after. */
export async function ejectMedia(c: RedfishClient, mediaPath: string): Promise<{ ejected: boolean }> {
  const m = await c.get(mediaPath);
  if (isEmptyMedia(m.json)) return { ejected: false };
  const target = mediaAction(m.json, "EjectMedia");
  if (target) {
    let a = await postAction(c, target);
    if (a.status === 400 || a.status === 415) a = await postAction(c, target, {}, "eject_needs_empty_body");
    c.expect(a, "POST", target);
  } else if (m.allow.includes("PATCH")) {
    c.expect(await patchResource(c, m, { Image: null, Inserted: false }, "media_by_patch"), "PATCH", m.path);
  } else {
    throw new RedfishError("not_supported", `${mediaPath} has no EjectMedia action and does not allow PATCH`, { path: mediaPath });
  }
  const after = await c.get(mediaPath);
  if (!isEmptyMedia(after.json))
    throw new RedfishError("bad_answer", `${mediaPath} still shows ${text(after.json.Image, "media")} inserted after the eject`, {
      path: mediaPath,
    });
  return { ejected: true };
}

/** What an InsertMedia request came to: the image shows already, the BMC is mounting it (a task, or in the background), or it was refused (throws). */
export type InsertStart = { state: "inserted" } | { state: "task"; ref: TaskRef } | { state: "sent" };

/** Whether the device shows this image inserted now. */
export async function mediaShows(c: RedfishClient, mediaPath: string, image: string, quirk?: QuirkId): Promise<boolean> {
  return showsImage((await c.get(mediaPath, quirk)).json, image);
}

/** Asks the device to insert the image (InsertMedia, or PATCH where the device offers only that), without waiting for a task. */
export async function startInsertMedia(c: RedfishClient, mediaPath: string, image: string): Promise<InsertStart> {
  const m = await c.get(mediaPath);
  if (showsImage(m.json, image)) return { state: "inserted" };
  const target = mediaAction(m.json, "InsertMedia");
  let a;
  let where = target ?? m.path;
  if (target) {
    // Inserted and WriteProtected are left at their defaults (true, true): SuperMicro X11/X12
    // refuse the action when they are sent at all (sushy sends them only when not the default)
    a = await c.call("POST", target, { Image: image });
    if (wantsTransferProtocol(a.status, a.json))
      a = await c.call(
        "POST",
        target,
        { Image: image, TransferProtocolType: new URL(image).protocol.replace(":", "").toUpperCase() },
        { quirk: "transfer_protocol_required" },
      );
  } else if (m.allow.includes("PATCH")) {
    where = m.path;
    a = await c.call(
      "PATCH",
      m.path,
      { Image: image, Inserted: true, WriteProtected: true },
      { quirk: "media_by_patch", ...(m.etag ? { headers: { "if-match": m.etag } } : {}) },
    );
  } else {
    throw new RedfishError("not_supported", `${mediaPath} has no InsertMedia action and does not allow PATCH`, { path: mediaPath });
  }
  if (a.status === 202) return { state: "task", ref: taskRef(a, `InsertMedia ${image}`) };
  c.expect(a, target ? "POST" : "PATCH", where, "media_refused");
  return { state: "sent" };
}

/** Inserts the image and waits until the device shows it (a 202 task followed to its end). */
export async function insertMedia(c: RedfishClient, mediaPath: string, image: string): Promise<void> {
  const start = await startInsertMedia(c, mediaPath, image);
  if (start.state === "inserted") return;
  if (start.state === "task") {
    let ref = start.ref;
    const deadline = Date.now() + c.timings.taskTimeoutMs;
    for (let wait = c.timings.taskPollMs; ;) {
      if (Date.now() + wait > deadline)
        throw new RedfishError("timeout", `${ref.what}: the task did not finish in time`, { path: ref.monitor });
      await c.pause(wait);
      const p = await pollTask(c, ref);
      if (p.state === "done") {
        if (!okStatus(p.answer.status)) c.expect(p.answer, "GET", ref.monitor, "media_refused");
        break;
      }
      ref = p.ref;
      wait = p.retryAfterMs;
    }
  }
  for (let i = 0; i < 6; i++) {
    if (await mediaShows(c, mediaPath, image, i > 0 ? "media_mount_delay" : undefined)) return;
    await c.pause(Math.min(2_000, c.timings.powerPollMs));
  }
  const last = (await c.get(mediaPath)).json;
  throw new RedfishError(
    "media_refused",
    `${mediaPath} accepted the image but shows ${last.Inserted === true ? `${text(last.Image)} inserted` : "no media inserted"}`,
    { path: mediaPath },
  );
}

// ---------------------------------------------------------------- boot

/** Sets a one-time boot from the virtual CD (BootSourceOverrideEnabled Once), and checks it took. */
export async function setOneTimeCdBoot(c: RedfishClient, systemPath: string): Promise<{ target: string; via: string }> {
  const system = await c.get(systemPath);
  const choice = chooseCdBootTarget(system.json);
  const boot = (system.json.Boot as Json | undefined) ?? {};
  if (!choice)
    throw new RedfishError(
      "not_supported",
      `${systemPath} offers no CD boot target (it allows ${JSON.stringify(boot["BootSourceOverrideTarget@Redfish.AllowableValues"])})`,
      { path: systemPath },
    );
  const enabled = boot["BootSourceOverrideEnabled@Redfish.AllowableValues"];
  if (Array.isArray(enabled) && !enabled.includes("Once"))
    throw new RedfishError(
      "not_supported",
      `${systemPath} does not allow a one-time boot override (BootSourceOverrideEnabled ${enabled.join(", ")})`,
      {
        path: systemPath,
      },
    );
  let resource = system;
  let quirk = choice.quirk;
  const settings = settingsObject(system.json);
  if (settings) {
    const s = await c.get(settings);
    const sBoot = (s.json.Boot as Json | undefined) ?? {};
    if ("BootSourceOverrideTarget" in sBoot || "BootSourceOverrideEnabled" in sBoot) {
      resource = s;
      quirk = "boot_via_settings";
    }
  }
  const body = { Boot: { BootSourceOverrideEnabled: "Once", BootSourceOverrideTarget: choice.target } };
  c.expect(await patchResource(c, resource, body, quirk), "PATCH", resource.path);
  if (resource === system) {
    const after = ((await c.get(systemPath)).json.Boot as Json | undefined) ?? {};
    if (after.BootSourceOverrideTarget !== choice.target || after.BootSourceOverrideEnabled !== "Once")
      throw new RedfishError(
        "bad_answer",
        `${systemPath} accepted the boot override but shows ${text(after.BootSourceOverrideEnabled)} ${text(after.BootSourceOverrideTarget)}`,
        { path: systemPath },
      );
  }
  return { target: choice.target, via: resource.path };
}
