import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";

// A software TPM 2.0 (Debian's swtpm, libtpms) for a simulated node or a test: its state (seeds,
// persistent handles such as the attestation key) lives in its own directory and survives a
// restart, its PCRs start from zero on every start (startup-clear), as a real TPM's do at boot.
// Reached over TCP: TPM2TOOLS_TCTI=swtpm:host=127.0.0.1,port=P.

const exec = promisify(execFile);

const SWTPM = "/usr/bin/swtpm";
export const swtpmAvailable = (): boolean => existsSync(SWTPM) && spawnSync("tpm2_quote", ["--version"], { stdio: "ignore" }).status === 0;

export interface RunningSwtpm {
  tcti: string;
  port: number;
  stop(): Promise<void>;
}

async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.once("error", reject);
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    if (port >= 65_000) continue;
    const second = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once("error", () => resolve(false));
      s.listen(port + 1, "127.0.0.1", () => s.close(() => resolve(true)));
    });
    if (second) return port;
  }
  throw new Error("no free pair of ports for swtpm");
}

async function answers(port: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => (s.end(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/** Starts swtpm on free ports with its state in `stateDir` (an absolute path: the daemon leaves the working directory). */
export async function startSwtpm(stateDir: string): Promise<RunningSwtpm> {
  const dir = path.resolve(stateDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let attempt = 0; ; attempt++) {
    const port = await freePortPair();
    const pidFile = path.join(dir, `swtpm-${port}.pid`);
    try {
      await exec(
        SWTPM,
        [
          "socket",
          "--tpmstate",
          `dir=${dir}`,
          "--tpm2",
          "--server",
          `type=tcp,port=${port},bindaddr=127.0.0.1`,
          "--ctrl",
          `type=tcp,port=${port + 1},bindaddr=127.0.0.1`,
          "--flags",
          "not-need-init,startup-clear",
          "--daemon",
          "--pid",
          `file=${pidFile}`,
        ],
        { timeout: 15_000 },
      );
      if (!(await answers(port, 5_000))) throw new Error("swtpm did not answer");
    } catch (e) {
      if (attempt >= 4) throw new Error(`swtpm would not start: ${(e as Error).message}`);
      continue;
    }
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    return {
      tcti: `swtpm:host=127.0.0.1,port=${port}`,
      port,
      async stop() {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
        for (let i = 0; i < 100; i++) {
          try {
            process.kill(pid, 0);
          } catch {
            break;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
        rmSync(pidFile, { force: true });
      },
    };
  }
}
