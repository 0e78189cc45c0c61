import { BOOT_TARGETS, RESET_TYPES, type MediaDevice, type SimBmcState, type SimTask } from "./sim-bmc-state";

// The Redfish documents a simulated BMC (agent/src/sim-bmc.ts) serves: the ComputerSystem, the
// Manager, virtual media, tasks and error bodies, shaped as DMTF's schemas and public mockups shape
// them, from the BMC's state.

/** What a simulated BMC's documents are made of. */
export interface SimBmcDocContext {
  hostname: string;
  seed: string;
  systemId: string;
  managerId: string;
  /** the system's and the manager's paths, and where the virtual media collection is */
  S: string;
  M: string;
  mediaBase: string;
  mediaOn: "Manager" | "System";
  resetInfo: "inline" | "action_info";
  state: SimBmcState;
}

const REGISTRY = "Base.1.15";
export type Body = Record<string, unknown>;

export function errorBody(messageId: string, message: string, related: string[] = []): Body {
  return {
    error: {
      code: `${REGISTRY}.GeneralError`,
      message,
      "@Message.ExtendedInfo": [
        {
          "@odata.type": "#Message.v1_1_2.Message",
          MessageId: `${REGISTRY}.${messageId}`,
          Message: message,
          RelatedProperties: related,
          Severity: "Warning",
        },
      ],
    },
  };
}

export const link = (path: string) => ({ "@odata.id": path });
export const collection = (path: string, type: string, members: string[]) => ({
  "@odata.id": path,
  "@odata.type": `#${type}.${type}`,
  Name: type.replace("Collection", " Collection"),
  Members: members.map(link),
  "Members@odata.count": members.length,
});

export const systemDocOf = (c: SimBmcDocContext): Body => ({
  "@odata.id": c.S,
  "@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem",
  "@odata.etag": `"sys-${c.state.systemVersion}"`,
  Id: c.systemId,
  Name: `Simulated ${c.hostname}`,
  SystemType: "Physical",
  Manufacturer: "GPUForge Simulated",
  Model: "SIM-8GPU",
  SerialNumber: c.seed.slice(0, 12).toUpperCase(),
  UUID: `${c.seed.slice(0, 8)}-${c.seed.slice(8, 12)}-4${c.seed.slice(13, 16)}-8${c.seed.slice(17, 20)}-${c.seed.slice(20, 32)}`,
  HostName: c.hostname,
  PowerState: c.state.power,
  Status: { State: "Enabled", Health: "OK" },
  Boot: {
    BootSourceOverrideEnabled: c.state.boot.enabled,
    BootSourceOverrideTarget: c.state.boot.target,
    "BootSourceOverrideTarget@Redfish.AllowableValues": [...BOOT_TARGETS],
    BootSourceOverrideMode: c.state.boot.mode,
  },
  ...(c.mediaOn === "System" ? { VirtualMedia: link(`${c.S}/VirtualMedia`) } : {}),
  Links: { ManagedBy: [link(c.M)], Chassis: [link("/redfish/v1/Chassis/Enclosure")] },
  Actions: {
    "#ComputerSystem.Reset": {
      target: `${c.S}/Actions/ComputerSystem.Reset`,
      ...(c.resetInfo === "inline"
        ? { "ResetType@Redfish.AllowableValues": [...RESET_TYPES] }
        : { "@Redfish.ActionInfo": `${c.S}/ResetActionInfo` }),
    },
  },
});
export const managerDocOf = (c: SimBmcDocContext): Body => ({
  "@odata.id": c.M,
  "@odata.type": "#Manager.v1_17_0.Manager",
  Id: c.managerId,
  Name: "Simulated BMC",
  ManagerType: "BMC",
  FirmwareVersion: "sim-1.0",
  Status: { State: "Enabled", Health: "OK" },
  ...(c.mediaOn === "Manager" ? { VirtualMedia: link(`${c.M}/VirtualMedia`) } : {}),
  Links: { ManagerForServers: [link(c.S)], ManagerForChassis: [link("/redfish/v1/Chassis/Enclosure")] },
  Actions: { "#Manager.Reset": { target: `${c.M}/Actions/Manager.Reset`, "ResetType@Redfish.AllowableValues": ["GracefulRestart"] } },
});
export const mediaDocOf = (c: SimBmcDocContext, d: MediaDevice): Body => ({
  "@odata.id": `${c.mediaBase}/${d.id}`,
  "@odata.type": "#VirtualMedia.v1_6_0.VirtualMedia",
  "@odata.etag": `"vm-${d.id}-${d.version}"`,
  Id: d.id,
  Name: d.name,
  MediaTypes: d.mediaTypes,
  Image: d.image,
  ImageName: d.image ? d.image.split("/").pop() : null,
  Inserted: d.inserted,
  WriteProtected: d.writeProtected,
  ConnectedVia: d.inserted ? "URI" : "NotConnected",
  TransferProtocolType: d.image ? (d.image.startsWith("https") ? "HTTPS" : "HTTP") : null,
  Actions: {
    "#VirtualMedia.InsertMedia": { target: `${c.mediaBase}/${d.id}/Actions/VirtualMedia.InsertMedia` },
    "#VirtualMedia.EjectMedia": { target: `${c.mediaBase}/${d.id}/Actions/VirtualMedia.EjectMedia` },
  },
});
export const taskDoc = (t: SimTask): Body => ({
  "@odata.id": `/redfish/v1/TaskService/Tasks/${t.id}`,
  "@odata.type": "#Task.v1_7_0.Task",
  Id: t.id,
  Name: `Task ${t.id}`,
  TaskState: t.state,
  TaskStatus: t.status,
  PercentComplete: t.percent,
  StartTime: t.startedAt,
  ...(t.endedAt ? { EndTime: t.endedAt } : {}),
  TaskMonitor: `/redfish/v1/TaskService/TaskMonitors/${t.id}`,
  Messages: t.messages.map((m) => ({ MessageId: `${REGISTRY}.Success`, Message: m })),
});
