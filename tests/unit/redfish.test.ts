import { describe, expect, it } from "vitest";
import { parseCidrList } from "@/lib/http/client-address";
import { bmcAddressProblem, literalAddress } from "@/lib/redfish/address-policy";
import { isNotReady, QUIRKS, redfishMessages, retryAfterMs, strongEtag, wantsTransferProtocol } from "@/lib/redfish/quirks";
import {
  actionInfoValues,
  cdCapable,
  chooseCdBootTarget,
  chooseResetType,
  isEmptyMedia,
  isTask,
  odataIds,
  resetAction,
  showsImage,
  taskOutcome,
} from "@/lib/redfish/resources";

// The pure parts of the Redfish client: which answers mean "not now", which ResetType an action is
// sent as, what counts as a CD device and as the CD boot target, how a Task reads, and where a BMC
// request may go.

const error = (ids: string[], related: string[] = []) => ({
  error: {
    code: "Base.1.8.GeneralError",
    message: "A general error has occurred.",
    "@Message.ExtendedInfo": ids.map((id) => ({ MessageId: id, Message: `${id} happened`, RelatedProperties: related })),
  },
});

describe("Redfish answers", () => {
  it("reads MessageIds and messages of an error body, and nothing of a body that is not one", () => {
    expect(redfishMessages(error(["Base.1.8.ResourceInUse"]))).toEqual({
      ids: ["Base.1.8.GeneralError", "Base.1.8.ResourceInUse"],
      text: "Base.1.8.ResourceInUse happened",
    });
    expect(redfishMessages({ error: { message: "plain" } })).toEqual({ ids: [], text: "plain" });
    expect(redfishMessages("oops")).toEqual({ ids: [], text: "" });
    expect(redfishMessages(undefined)).toEqual({ ids: [], text: "" });
  });

  it("tells 'not ready' from 'no': 503, and busy MessageIds of any registry version", () => {
    expect(isNotReady(503, undefined)).toBe(true);
    expect(isNotReady(400, error(["Base.1.15.ServiceTemporarilyUnavailable"]))).toBe(true);
    expect(isNotReady(409, error(["Base.1.0.ResourceInUse"]))).toBe(true);
    expect(isNotReady(400, error(["iLO.2.14.UnableToModifyDuringSystemPOST"]))).toBe(true);
    expect(isNotReady(400, error(["Base.1.8.PropertyValueNotInList"]))).toBe(false);
    expect(isNotReady(404, error(["Base.1.8.ResourceInUse"]))).toBe(false);
    expect(isNotReady(500, undefined)).toBe(false);
  });

  it("sees an InsertMedia refusal that asks for TransferProtocolType", () => {
    expect(wantsTransferProtocol(400, error(["Base.1.5.ActionParameterMissing"], ["#/TransferProtocolType"]))).toBe(true);
    expect(wantsTransferProtocol(400, error(["Base.1.5.ActionParameterMissing"], ["#/Image"]))).toBe(false);
    expect(wantsTransferProtocol(409, error(["Base.1.5.ActionParameterMissing"], ["#/TransferProtocolType"]))).toBe(false);
  });

  it("reads Retry-After as seconds or an HTTP date, capped", () => {
    const now = Date.parse("2026-12-01T10:00:00Z");
    expect(retryAfterMs("3", 30_000, now)).toBe(3_000);
    expect(retryAfterMs("600", 30_000, now)).toBe(30_000);
    expect(retryAfterMs("Tue, 01 Dec 2026 10:00:05 GMT", 30_000, now)).toBe(5_000);
    expect(retryAfterMs("Tue, 01 Dec 2026 09:00:00 GMT", 30_000, now)).toBe(0);
    expect(retryAfterMs("soon", 30_000, now)).toBeUndefined();
    expect(retryAfterMs(undefined, 30_000, now)).toBeUndefined();
  });

  it("turns a weak ETag strong, and leaves a strong one alone", () => {
    expect(strongEtag('W/"abc123"')).toBe('"abc123"');
    expect(strongEtag('"abc123"')).toBeNull();
  });

  it("gives every quirk a reason", () => {
    for (const [id, reason] of Object.entries(QUIRKS)) expect(reason.length, id).toBeGreaterThan(40);
  });
});

describe("tasks", () => {
  const task = (TaskState: string, extra: Record<string, unknown> = {}) => ({
    "@odata.type": "#Task.v1_7_0.Task",
    Id: "7",
    TaskState,
    ...extra,
  });
  it("knows a Task by its type and state", () => {
    expect(isTask(task("Running"))).toBe(true);
    expect(isTask({ "@odata.type": "#VirtualMedia.v1_6_0.VirtualMedia", TaskState: "Running" })).toBe(false);
    expect(isTask({ "@odata.type": "#Task.v1_7_0.Task" })).toBe(false);
  });
  it("reads running, completed and failed states, failures with their messages", () => {
    for (const s of ["New", "Starting", "Running", "Pending", "Suspended", "Interrupted", "Stopping", "Service", "Cancelling"])
      expect(taskOutcome(task(s)).state).toBe("running");
    expect(taskOutcome(task("Running", { PercentComplete: 40 }))).toEqual({ state: "running", percent: 40 });
    expect(taskOutcome(task("Completed", { TaskStatus: "OK" }))).toEqual({ state: "completed" });
    expect(taskOutcome(task("Completed", { TaskStatus: "Critical" })).state).toBe("failed");
    expect(taskOutcome(task("Exception", { Messages: [{ Message: "image unreadable" }] }))).toEqual({
      state: "failed",
      why: "task 7 ended Exception: image unreadable",
    });
    expect(taskOutcome(task("Killed")).state).toBe("failed");
    expect(taskOutcome(task("Cancelled")).state).toBe("failed");
    expect(taskOutcome(task("Sideways")).state).toBe("failed");
  });
});

describe("power", () => {
  it("sends each action as the first ResetType of its preference the BMC lists", () => {
    const all = ["On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "PushPowerButton", "PowerCycle"];
    expect(chooseResetType("on", all)).toBe("On");
    expect(chooseResetType("off", all)).toBe("ForceOff");
    expect(chooseResetType("restart", all)).toBe("ForceRestart");
    expect(chooseResetType("on", ["ForceOn", "ForceOff"])).toBe("ForceOn");
    expect(chooseResetType("off", ["GracefulShutdown", "On"])).toBe("GracefulShutdown");
    expect(chooseResetType("off", ["PushPowerButton"])).toBe("PushPowerButton");
    expect(chooseResetType("restart", ["PowerCycle", "On"])).toBe("PowerCycle");
    expect(chooseResetType("restart", ["On", "ForceOff"])).toBeNull();
    expect(chooseResetType("on", [])).toBeNull();
  });
  it("reads the Reset action inline or through its ActionInfo", () => {
    expect(
      resetAction({ Actions: { "#ComputerSystem.Reset": { target: "/r", "ResetType@Redfish.AllowableValues": ["On", 3, "ForceOff"] } } }),
    ).toEqual({ target: "/r", allowed: ["On", "ForceOff"] });
    expect(resetAction({ Actions: { "#ComputerSystem.Reset": { target: "/r", "@Redfish.ActionInfo": "/info" } } })).toEqual({
      target: "/r",
      allowed: null,
      actionInfo: "/info",
    });
    expect(resetAction({ Actions: {} })).toBeNull();
    expect(resetAction({})).toBeNull();
    const info = { Parameters: [{ Name: "Other" }, { Name: "ResetType", AllowableValues: ["On", "ForceOff"] }] };
    expect(actionInfoValues(info, "ResetType")).toEqual(["On", "ForceOff"]);
    expect(actionInfoValues(info, "Other")).toBeNull();
    expect(actionInfoValues({}, "ResetType")).toBeNull();
  });
});

describe("boot and virtual media", () => {
  const sys = (allowed?: string[], manufacturer?: string) => ({
    Manufacturer: manufacturer,
    Boot: allowed ? { "BootSourceOverrideTarget@Redfish.AllowableValues": allowed } : {},
  });
  it("boots the virtual CD as Cd, as UsbCd where the BMC presents it so, and refuses where neither is offered", () => {
    expect(chooseCdBootTarget(sys(["Pxe", "Cd", "Hdd"]))).toEqual({ target: "Cd" });
    expect(chooseCdBootTarget(sys())).toEqual({ target: "Cd" });
    expect(chooseCdBootTarget(sys(["Pxe", "Cd", "UsbCd"], "Supermicro"))).toEqual({ target: "UsbCd", quirk: "supermicro_usb_cd" });
    expect(chooseCdBootTarget(sys(["Pxe", "UsbCd"]))).toEqual({ target: "UsbCd", quirk: "cd_target_missing" });
    expect(chooseCdBootTarget(sys(["Pxe", "Hdd"]))).toBeNull();
  });
  it("takes CD/DVD devices by MediaTypes, or by their name when older firmware lists none", () => {
    expect(cdCapable({ MediaTypes: ["CD", "DVD"] })).toEqual({ ok: true });
    expect(cdCapable({ MediaTypes: ["DVD"] })).toEqual({ ok: true });
    expect(cdCapable({ MediaTypes: ["Floppy", "USBStick"], Id: "CD1" })).toEqual({ ok: false });
    expect(cdCapable({ Id: "CD1", Name: "Virtual CD" })).toEqual({ ok: true, quirk: "media_types_missing" });
    expect(cdCapable({ Id: "RemovableMedia", Name: "Virtual Floppy" })).toEqual({ ok: false });
  });
  it("sees an image inserted whether the BMC echoes the URL or only the file name", () => {
    const url = "https://images.example/os/gpu-node.iso";
    expect(showsImage({ Inserted: true, Image: url }, url)).toBe(true);
    expect(showsImage({ Inserted: true, Image: "gpu-node.iso" }, url)).toBe(true);
    expect(showsImage({ Inserted: true, Image: null, ImageName: "gpu-node.iso" }, url)).toBe(true);
    expect(showsImage({ Inserted: false, Image: url }, url)).toBe(false);
    expect(showsImage({ Inserted: true, Image: "https://images.example/other.iso" }, url)).toBe(false);
    expect(isEmptyMedia({ Inserted: false, Image: null })).toBe(true);
    expect(isEmptyMedia({ Inserted: false, Image: "" })).toBe(true);
    expect(isEmptyMedia({ Inserted: true, Image: url })).toBe(false);
    expect(isEmptyMedia({ Inserted: false, Image: url })).toBe(false);
  });
  it("reads link arrays, dropping what is not a link", () => {
    expect(odataIds([{ "@odata.id": "/a" }, { nope: 1 }, { "@odata.id": "" }, { "@odata.id": "/b" }])).toEqual(["/a", "/b"]);
    expect(odataIds(undefined)).toEqual([]);
  });
});

describe("where a BMC request may go", () => {
  const none = { networks: [] };
  const mgmt = { networks: parseCidrList("10.20.0.0/16, 127.0.0.0/8")! };
  it("allows unicast addresses, and loopback and link-local only when BMC_NETWORKS lists them", () => {
    expect(bmcAddressProblem("10.1.2.3", none)).toBeNull();
    expect(bmcAddressProblem("192.0.2.10", none)).toBeNull();
    expect(bmcAddressProblem("2001:db8::5", none)).toBeNull();
    expect(bmcAddressProblem("127.0.0.1", none)).toMatch(/loopback or link-local/);
    expect(bmcAddressProblem("::1", none)).toMatch(/loopback or link-local/);
    expect(bmcAddressProblem("::ffff:127.0.0.1", none)).toMatch(/loopback or link-local/);
    expect(bmcAddressProblem("169.254.169.254", none)).toMatch(/loopback or link-local/);
    expect(bmcAddressProblem("fe80::1", none)).toMatch(/loopback or link-local/);
    expect(bmcAddressProblem("127.0.0.1", mgmt)).toBeNull();
    expect(bmcAddressProblem("169.254.169.254", mgmt)).toMatch(/loopback or link-local/);
  });
  it("never allows unspecified, multicast or reserved addresses, and with BMC_NETWORKS only what it lists", () => {
    for (const a of ["0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "ff02::1"])
      expect(bmcAddressProblem(a, mgmt)).toMatch(/unspecified|multicast/);
    expect(bmcAddressProblem("10.20.9.9", mgmt)).toBeNull();
    expect(bmcAddressProblem("10.21.0.1", mgmt)).toMatch(/outside the networks/);
  });
  it("tells literal addresses from names", () => {
    expect(literalAddress("10.0.0.1")).toBe("10.0.0.1");
    expect(literalAddress("[::1]")).toBe("::1");
    expect(literalAddress("bmc.example")).toBeNull();
  });
});
