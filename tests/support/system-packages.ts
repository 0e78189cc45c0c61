import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

// The real infrastructure parts the suite drives (../shared/STACK.md): Debian packages installed
// by the test run when they are missing, the way Chromium is. `npm test` installs every one of
// them in one apt-get call before the first stage (scripts/test.ts); a test file run on its own
// calls `ensureSystemTool` for what it needs. Neither ever skips: a part that cannot be installed
// is an error that says which package and why.

export interface SystemTool {
  /** Debian's package */
  readonly package: string;
  /** a file the package installs, to tell whether it is there */
  readonly probe: string;
}

export const SYSTEM_TOOLS = {
  chromium: { package: "chromium", probe: "/usr/bin/chromium" },
  dockerd: { package: "docker.io", probe: "/usr/sbin/dockerd" },
  busybox: { package: "busybox-static", probe: "/bin/busybox" },
  swtpm: { package: "swtpm", probe: "/usr/bin/swtpm" },
  swtpmSetup: { package: "swtpm-tools", probe: "/usr/bin/swtpm_setup" },
  tpm2Tools: { package: "tpm2-tools", probe: "/usr/bin/tpm2_quote" },
  slurm: { package: "slurm-wlm", probe: "/usr/sbin/slurmctld" },
  munge: { package: "munge", probe: "/usr/sbin/munged" },
  sushy: { package: "python3-sushy", probe: "/usr/lib/python3/dist-packages/sushy/__init__.py" },
  openssl: { package: "openssl", probe: "/usr/bin/openssl" },
} as const satisfies Record<string, SystemTool>;

export type SystemToolName = keyof typeof SYSTEM_TOOLS;

const missing = (tools: readonly SystemTool[]) => tools.filter((t) => !existsSync(t.probe));

/**
 * Installs the packages of `tools` that are missing. As root with apt-get, one `apt-get update`
 * and one install (waiting for another apt run's lock instead of failing on it); otherwise an
 * error naming the packages to install by hand.
 */
export function installSystemTools(tools: readonly SystemTool[], log: (line: string) => void = console.log): void {
  const absent = missing(tools);
  if (absent.length === 0) return;
  const packages = [...new Set(absent.map((t) => t.package))];
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) {
    throw new Error(
      `Missing system packages for the tests: ${packages.join(", ")}. Install them (apt-get install -y ${packages.join(" ")}).`,
    );
  }
  log(`[system] installing Debian's ${packages.join(", ")}…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const lock = ["-o", "DPkg::Lock::Timeout=600"];
  const update = spawnSync("apt-get", [...lock, "update", "-qq"], { stdio: "inherit", env });
  if (update.status !== 0) log(`[system] apt-get update exited ${update.status}; trying the install with the lists there are`);
  const install = spawnSync("apt-get", [...lock, "install", "-y", "-qq", ...packages], { stdio: "inherit", env });
  const still = missing(tools);
  if (install.status !== 0 || still.length) {
    throw new Error(
      `Could not install ${still.map((t) => t.package).join(", ") || packages.join(", ")} (apt-get exited ${install.status})`,
    );
  }
}

/** The named tools, installed when missing (for a test file run on its own). */
export function ensureSystemTool(...names: SystemToolName[]): void {
  installSystemTools(names.map((n) => SYSTEM_TOOLS[n]));
}
