import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * A docker stand-in on PATH (tests/support/docker-standin-cli.mjs) with its own state directory, for
 * tests of the node agent's runner: what the agent ran, with which arguments and environment.
 */
type StandinNetworks = Record<string, { options?: Record<string, string> }>;

/** The workload network as a prepared agent leaves it (the default; pass `networks: {}` for a bare engine). */
export const PREPARED_NETWORKS: StandinNetworks = {
  "gpuforge-workloads": { options: { "com.docker.network.bridge.enable_icc": "false" } },
};

export function dockerStandin(
  config: {
    refuseImages?: string[];
    /** what a container of an image runs without a command (its "entrypoint"): for every image, and by image */
    entrypoint?: string;
    images?: Record<string, string>;
    noEngine?: boolean;
    networks?: StandinNetworks;
  } = {},
) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "docker-standin-"));
  const bin = path.join(dir, "bin");
  const state = path.join(dir, "config");
  mkdirSync(bin);
  mkdirSync(state);
  writeFileSync(path.join(state, "standin.json"), JSON.stringify({ networks: PREPARED_NETWORKS, ...config }));
  const script = path.resolve("tests/support/docker-standin-cli.mjs");
  writeFileSync(path.join(bin, "docker"), `#!/bin/sh\nexec "${process.execPath}" "${script}" "$@"\n`);
  chmodSync(path.join(bin, "docker"), 0o755);
  return {
    /** the environment the agent's docker client gets (PATH with the stand-in first, its state as DOCKER_CONFIG) */
    env: { PATH: `${bin}:${process.env.PATH}`, DOCKER_CONFIG: state, HOME: dir } as Record<string, string>,
    calls(): Array<{ args: string[]; env: string[] }> {
      const file = path.join(state, "calls.jsonl");
      return existsSync(file)
        ? readFileSync(file, "utf8")
            .trim()
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [];
    },
    /** removes every container the stand-in still has (their processes included), as `docker rm -f` would */
    removeAll(): void {
      const containers = path.join(state, "containers");
      if (!existsSync(containers)) return;
      for (const f of readdirSync(containers).filter((n) => n.endsWith(".json")))
        spawnSync(path.join(bin, "docker"), ["rm", "-f", f.slice(0, -".json".length)], { env: { ...process.env, DOCKER_CONFIG: state } });
    },
    runs(): string[][] {
      return this.calls()
        .filter((c) => c.args[0] === "run")
        .map((c) => c.args);
    },
  };
}
