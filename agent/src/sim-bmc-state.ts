// The state of one simulated BMC (agent/src/sim-bmc.ts serves it over Redfish): the system's power
// and what it boots from, its boot override, its virtual media devices and the BMC's tasks. Pure
// except for timers: a reset takes a moment to show in PowerState, a powered-on system boots
// (from the virtual CD when a one-time Cd override and an inserted image say so, else from its
// disk), an InsertMedia task mounts its image a while later. Everything a test or the simulator
// observes happens through `on`.

export type PowerState = "On" | "Off" | "PoweringOn" | "PoweringOff";
export type OverrideEnabled = "Disabled" | "Once" | "Continuous";

export const BOOT_TARGETS = ["None", "Pxe", "Cd", "Usb", "Hdd", "BiosSetup", "UefiShell"] as const;
export const RESET_TYPES = [
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

export interface MediaDevice {
  id: string;
  name: string;
  mediaTypes: string[];
  inserted: boolean;
  image: string | null;
  writeProtected: boolean;
  version: number;
}

export interface SimTask {
  id: string;
  state: "Running" | "Completed" | "Exception";
  status: "OK" | "Critical";
  percent: number;
  startedAt: string;
  endedAt?: string;
  messages: string[];
  /** the monitor answers once with the outcome after the end, then is gone */
  monitorRead: boolean;
}

export interface BootEvent {
  from: "Cd" | "Hdd" | "Pxe";
  image: string | null;
}

export interface SimBmcEvents {
  /** the system's power changed (Off: the node's OS and agent are gone) */
  power?: (state: "On" | "Off") => void;
  /** the system finished booting (its OS is up) */
  booted?: (e: BootEvent) => void;
}

export interface SimBmcTiming {
  /** from a reset to the new PowerState */
  powerMs: number;
  /** from PowerState On to the OS being up */
  bootMs: number;
  /** how long an InsertMedia task runs (0: the action completes at once, 204) */
  taskMs: number;
}

let taskSeq = 0;

export class SimBmcState {
  power: PowerState = "On";
  boot = { enabled: "Disabled" as OverrideEnabled, target: "None" as string, mode: "UEFI" };
  systemVersion = 1;
  readonly media: MediaDevice[] = [
    { id: "CD1", name: "Virtual CD", mediaTypes: ["CD", "DVD"], inserted: false, image: null, writeProtected: true, version: 1 },
    { id: "USB1", name: "Virtual USB stick", mediaTypes: ["USBStick"], inserted: false, image: null, writeProtected: false, version: 1 },
  ];
  readonly tasks = new Map<string, SimTask>();
  /** what the system booted from last */
  lastBoot: BootEvent | null = { from: "Hdd", image: null };
  private timers = new Set<NodeJS.Timeout>();
  /** the fault that makes the next InsertMedia tasks fail */
  failTasks = false;

  constructor(
    readonly timing: SimBmcTiming,
    private readonly on: SimBmcEvents = {},
  ) {}

  private later(ms: number, fn: () => void) {
    if (ms <= 0) return fn();
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  stop() {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private setPower(p: PowerState) {
    this.power = p;
    this.systemVersion++;
  }

  private powerOff(graceful: boolean) {
    const off = () => {
      this.setPower("Off");
      this.on.power?.("Off");
    };
    if (graceful && this.timing.powerMs > 0) {
      this.setPower("PoweringOff");
      this.later(this.timing.powerMs, off);
    } else off();
  }

  /** Power on and boot: the one-time override is used (and cleared) at this boot. */
  private powerOn() {
    const cd = this.media.find((m) => m.id === "CD1")!;
    const overridden = this.boot.enabled !== "Disabled";
    const from: BootEvent["from"] =
      overridden && this.boot.target === "Cd" && cd.inserted ? "Cd" : overridden && this.boot.target === "Pxe" ? "Pxe" : "Hdd";
    const image = from === "Cd" ? cd.image : null;
    if (this.boot.enabled === "Once") {
      this.boot = { ...this.boot, enabled: "Disabled", target: "None" };
    }
    const on = () => {
      this.setPower("On");
      this.on.power?.("On");
      this.later(this.timing.bootMs, () => {
        if (this.power !== "On") return;
        this.lastBoot = { from, image };
        this.on.booted?.({ from, image });
      });
    };
    if (this.timing.powerMs > 0) {
      this.setPower("PoweringOn");
      this.later(this.timing.powerMs, on);
    } else on();
  }

  /** A ComputerSystem.Reset: null when done, else why it is refused (409). */
  reset(type: string): string | null {
    const isOn = this.power === "On" || this.power === "PoweringOn";
    switch (type) {
      case "On":
      case "ForceOn":
        if (isOn) return "The system is already powered on";
        this.powerOn();
        return null;
      case "ForceOff":
      case "GracefulShutdown":
        if (!isOn) return "The system is already powered off";
        this.powerOff(type === "GracefulShutdown");
        return null;
      case "PushPowerButton":
        if (isOn) this.powerOff(false);
        else this.powerOn();
        return null;
      case "ForceRestart":
      case "GracefulRestart":
      case "PowerCycle":
        if (!isOn) return "The system is powered off; a restart needs it on";
        this.powerOff(false);
        this.powerOn();
        return null;
      case "Nmi":
        return null;
      default:
        return `Unknown ResetType ${type}`;
    }
  }

  setBoot(b: { enabled?: OverrideEnabled; target?: string; mode?: string }) {
    this.boot = { enabled: b.enabled ?? this.boot.enabled, target: b.target ?? this.boot.target, mode: b.mode ?? this.boot.mode };
    this.systemVersion++;
  }

  device(id: string): MediaDevice | undefined {
    return this.media.find((m) => m.id === id);
  }

  eject(d: MediaDevice) {
    d.inserted = false;
    d.image = null;
    d.version++;
  }

  /** Inserts at once, or through a task that mounts the image when it ends; the task when there is one. */
  insert(d: MediaDevice, image: string, writeProtected: boolean): SimTask | null {
    const mount = () => {
      d.inserted = true;
      d.image = image;
      d.writeProtected = writeProtected;
      d.version++;
    };
    if (this.timing.taskMs <= 0 && !this.failTasks) {
      mount();
      return null;
    }
    const task: SimTask = {
      id: String(++taskSeq),
      state: "Running",
      status: "OK",
      percent: 0,
      startedAt: new Date().toISOString(),
      messages: [`Mounting ${image} on ${d.id}`],
      monitorRead: false,
    };
    this.tasks.set(task.id, task);
    const fail = this.failTasks;
    this.later(Math.max(1, this.timing.taskMs), () => {
      task.endedAt = new Date().toISOString();
      task.percent = 100;
      if (fail) {
        task.state = "Exception";
        task.status = "Critical";
        task.messages.push(`The image at ${image} could not be read: connection refused by the image server`);
      } else {
        mount();
        task.state = "Completed";
        task.messages.push(`${image} is mounted on ${d.id}`);
      }
    });
    return task;
  }
}
