import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { placementKey } from "@/agent/src/placement-book";
import { jobsOf, podsOf, replicasOf } from "@/agent/src/runner";
import { heartbeat } from "@/lib/api/contracts/fleet";
import { heartbeatReplySchema, type HeartbeatReply } from "@/lib/fleet/assignments";

// The agent reads the heartbeat's answer with the contract's own types (imported as types only),
// so its bundle carries none of the control plane's code: not zod, not the schemas, not a server module.

const placement = (n: number) => ({ attempt: n, fence: `fence-${n}`, gpu_ids: [`GPU-${n}`], logs_path: `/api/logs/${n}` });

const reply: HeartbeatReply = {
  node: {
    id: "n1",
    cluster_id: "c1",
    hostname: "gpu-01",
    pod: null,
    rack: null,
    cpu_cores: 64,
    memory_gb: 512,
    agent_version: "1.0.0",
    address: "10.0.0.1",
    capabilities: { containers: true, runtime: "docker" },
    system: { os: null, kernel: null, driver_version: null, cuda_version: null },
    status: "available",
    slurm: null,
    last_heartbeat_at: null,
    created_at: "2026-01-01T00:00:00.000Z",
  },
  assignments: [
    { kind: "job", job_id: "j1", ...placement(1), image: "busybox", command: "true", outputs_path: "/o", report_token: "t" },
    {
      kind: "endpoint_replica",
      replica_id: "r1",
      endpoint_id: "e1",
      endpoint_name: "chat",
      model: "m",
      ...placement(2),
      metrics_path: "/m",
      serving_port: 8000,
      address_path: "/a",
      report_token: "t",
      access_secret: "s",
    },
    { kind: "pod", pod_id: "p1", pod_name: "dev", ...placement(3), image: "ubuntu", ports: [22], status_path: "/s", access_secret: "s" },
  ],
  lease_s: 90,
};

describe("the agent and the heartbeat contract", () => {
  it("reads the answer the contract publishes: the contract's 200 schema is the one the agent's types come from", () => {
    expect(heartbeat.responses[200]!.schema).toBe(heartbeatReplySchema);
    const parsed = heartbeatReplySchema.parse(reply);
    expect(jobsOf(parsed.assignments).map((a) => a.job_id)).toEqual(["j1"]);
    expect(replicasOf(parsed.assignments).map((a) => a.replica_id)).toEqual(["r1"]);
    expect(podsOf(parsed.assignments).map((a) => a.pod_id)).toEqual(["p1"]);
    expect(parsed.assignments.map(placementKey)).toEqual(["job:j1:1:fence-1", "replica:r1:2:fence-2", "pod:p1:3:fence-3"]);
  });

  it("bundles without any package or server module: lib code only from pure helpers", async () => {
    const out = await build({
      entryPoints: [path.resolve("agent/src/main.ts")],
      write: false,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.filter((f) => f.includes("node_modules/"))).toEqual([]);
    expect(inputs.filter((f) => !f.startsWith("agent/src/")).sort()).toEqual([
      "lib/fleet/image-reference.ts",
      "lib/fleet/workload-access.ts",
      "lib/pods/ssh-key.ts",
    ]);
  });
});
