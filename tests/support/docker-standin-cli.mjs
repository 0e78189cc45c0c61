#!/usr/bin/env node
// A stand-in for the docker CLI (see docker-standin.ts) in tests of the node agent: it records every call (its arguments
// and what it could see of its environment) and plays a container engine well enough for the
// agent: `run` runs the container's command with the host's sh (so exit codes and output are
// real), `stop` ends it, `inspect` / `wait` / `logs` / `rm` / `version` answer from its own state.
// Everything lives under $DOCKER_CONFIG (a directory the docker CLI reads its configuration from,
// and the one thing the agent passes through), so each test has its own engine.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = process.env.DOCKER_CONFIG;
if (!root) {
  console.error("docker stand-in: DOCKER_CONFIG is not set");
  process.exit(1);
}
const args = process.argv.slice(2);
const containers = path.join(root, "containers");
mkdirSync(containers, { recursive: true });
appendFileSync(path.join(root, "calls.jsonl"), JSON.stringify({ args, env: Object.keys(process.env).sort() }) + "\n");
const config = existsSync(path.join(root, "standin.json")) ? JSON.parse(readFileSync(path.join(root, "standin.json"), "utf8")) : {};
const stateOf = (name) => path.join(containers, `${name}.json`);
// networks: the ones created here, plus any the test says already existed (with their options)
const networksFile = path.join(root, "networks.json");
const networks = () => ({ ...config.networks, ...(existsSync(networksFile) ? JSON.parse(readFileSync(networksFile, "utf8")) : {}) });
const read = (name) => (existsSync(stateOf(name)) ? JSON.parse(readFileSync(stateOf(name), "utf8")) : null);
// `rm -f` leaves a marker before it kills, so the killed container's `run` does not write its
// state back after the removal (docker's removal is atomic; two processes here are not)
const removedMark = (name) => path.join(containers, `${name}.removed`);
const write = (name, s) => writeFileSync(stateOf(name), JSON.stringify(s));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const [cmd, ...rest] = args;
  if (cmd === "version" || cmd === "info") {
    if (config.noEngine) return 1;
    console.log(config.version ?? "27.3.1");
    return 0;
  }
  if (cmd === "network") {
    const [sub, ...more] = rest;
    const name = more.at(-1);
    if (sub === "inspect") {
      const n = networks()[name];
      if (!n) {
        console.error(`Error response from daemon: network ${name} not found`);
        return 1;
      }
      console.log(JSON.stringify(n.options ?? {}));
      return 0;
    }
    if (sub === "create") {
      if (networks()[name]) {
        console.error(`Error response from daemon: network with name ${name} already exists`);
        return 1;
      }
      const options = {};
      for (let i = 0; i < more.length - 1; i++)
        if (more[i] === "--opt") {
          const [k, ...v] = more[i + 1].split("=");
          options[k] = v.join("=");
        }
      const existing = existsSync(networksFile) ? JSON.parse(readFileSync(networksFile, "utf8")) : {};
      writeFileSync(networksFile, JSON.stringify({ ...existing, [name]: { options } }));
      console.log(`net-${name}`);
      return 0;
    }
  }
  if (cmd === "run") {
    const name = rest[rest.indexOf("--name") + 1];
    const network = rest[rest.indexOf("--network") + 1];
    if (!networks()[network]) {
      console.error(`docker: Error response from daemon: network ${network} not found.`);
      return 125;
    }
    const dashdash = rest.indexOf("--");
    const image = rest[dashdash + 1];
    const command = rest.slice(dashdash + 2);
    if (read(name)) {
      console.error(`docker: Error response from daemon: Conflict. The container name "/${name}" is already in use.`);
      return 125;
    }
    if ((config.refuseImages ?? []).includes(image)) {
      console.error(`docker: Error response from daemon: pull access denied for ${image}`);
      return 125;
    }
    const env = {};
    for (let i = 0; i < dashdash; i++)
      if (rest[i] === "--env") {
        const [k, ...v] = rest[i + 1].split("=");
        env[k] = v.join("=");
      }
    // an image's own entrypoint: the one the test gave that image, else the stand-in's default
    const script = command[0] === "sh" && command[1] === "-c" ? command[2] : (config.images?.[image] ?? config.entrypoint ?? "sleep 3600");
    // a process group of its own, as a container's processes are one unit: stopping it stops all of them
    const child = spawn("sh", ["-c", script], { stdio: "inherit", env: { PATH: process.env.PATH, ...env }, detached: true });
    child.on("error", (e) => {
      process.stderr.write(`docker stand-in: could not run the container's shell: ${e.message}\n`);
      process.exit(127);
    });
    rmSync(removedMark(name), { force: true });
    write(name, { status: "running", pid: child.pid, image });
    const forward = (sig) => {
      try {
        process.kill(-child.pid, sig);
      } catch {}
    };
    process.on("SIGTERM", () => forward("SIGTERM"));
    const code = await new Promise((r) => child.once("exit", (c, s) => r(c ?? (s === "SIGTERM" ? 143 : 137))));
    const s = existsSync(removedMark(name)) ? null : read(name);
    if (s) write(name, { ...s, status: "exited", exitCode: code });
    return code;
  }
  if (cmd === "stop") {
    const name = rest.at(-1);
    const s = read(name);
    if (!s) return 1;
    if (s.status === "running") {
      try {
        process.kill(-s.pid, "SIGTERM");
      } catch {}
    }
    return 0;
  }
  if (cmd === "rm") {
    const name = rest.at(-1);
    writeFileSync(removedMark(name), "");
    const s = read(name);
    if (s?.status === "running") {
      try {
        process.kill(-s.pid, "SIGKILL");
      } catch {}
    }
    rmSync(stateOf(name), { force: true });
    return 0;
  }
  if (cmd === "inspect") {
    const s = read(rest.at(-1));
    if (!s) {
      console.error(`Error: No such object: ${rest.at(-1)}`);
      return 1;
    }
    // `--format {{.State.Status}}` asks for the status alone; `{{json .State}}` for the state object;
    // the workload network's address is the host's own (the stand-in runs containers as host processes)
    if (rest.includes("{{.State.Status}}")) console.log(s.status);
    else if (rest.some((a) => a.includes(".IPAddress"))) console.log(s.status === "running" ? "127.0.0.1" : "");
    else console.log(JSON.stringify({ Status: s.status, ExitCode: s.exitCode ?? 0 }));
    return 0;
  }
  if (cmd === "wait") {
    const name = rest.at(-1);
    for (;;) {
      const s = read(name);
      if (!s) return 1;
      if (s.status !== "running") {
        console.log(String(s.exitCode ?? 0));
        return 0;
      }
      await sleep(50);
    }
  }
  if (cmd === "logs") return 0;
  console.error(`docker stand-in: unknown command ${cmd}`);
  return 1;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
