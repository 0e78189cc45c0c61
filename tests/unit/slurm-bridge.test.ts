import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { SlurmBook } from "@/agent/src/slurm/book";
import { SlurmBridge } from "@/agent/src/slurm/bridge";
import { SlurmToolError, type SlurmTools } from "@/agent/src/slurm/cli";
import { parseGpuNaming } from "@/agent/src/slurm/mirror";
import { SQUEUE_FORMAT } from "@/agent/src/slurm/parse";
import { ReportQueue } from "@/agent/src/slurm/reports";
import { ApiError, type Client } from "@/agent/src/client";
import { LogSpool } from "@/agent/src/log-spool";

// The bridge's decisions, on Slurm answers scripted here and a control plane recorded here (the
// real Slurm and the real app drive it in tests/e2e/slurm-bridge.test.ts). What is checked: an
// answer it cannot read changes nothing and never crashes it, a placement is never submitted
// twice, work is cancelled as unassigned only when every node's heartbeat answered, and a bridge
// cut off from the control plane stops its work.

const JOB = "3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40";
const FENCE = "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11";
const KEY = `job:${JOB}:1:${FENCE}`;
const COMMENT = `gpuforge:${JOB}:1:${FENCE}`;

const node = (name: string, state = "IDLE") =>
  `NodeName=${name} CPUAlloc=0 CPUTot=8 Gres=gpu:h100:2 RealMemory=64000 AllocMem=0 State=${state} Partitions=gpu Version=22.05.8`;
const partition = "PartitionName=gpu Default=YES MaxTime=UNLIMITED Nodes=n[1-2] State=UP TotalCPUs=16 TotalNodes=2";
const gres = "n1|gpu:h100:0(IDX:N/A)|\nn2|gpu:h100:0(IDX:N/A)|\n";
const queueLine = (id: string, state: string, user: string, nodes: string, comment: string) =>
  `${id}|${id}|${state}|${user}|gpu|1|${nodes}|gres:gpu:h100:1|1796158000|1796161600|1796157990|None|${comment}`;

class FakeSlurm implements SlurmTools {
  calls: string[][] = [];
  out: Record<string, string> = {
    "scontrol show config": "ClusterName = hpc\nSLURM_VERSION = 22.05.8\nMinJobAge = 300 sec\n",
    "scontrol -o show node": `${node("n1")}\n${node("n2")}\n`,
    "scontrol -o show partition": `${partition}\n`,
    "sinfo -N -h -O NodeList:|,GresUsed:|": gres,
    [`squeue -h -a -t all -o ${SQUEUE_FORMAT}`]: "",
  };
  fail = new Set<string>();
  nextJob = 100;
  async run(tool: string, args: readonly string[]) {
    this.calls.push([tool, ...args]);
    const key = [tool, ...args].join(" ");
    if (this.fail.has(tool) || this.fail.has(key))
      throw new SlurmToolError(tool, 1, "slurm_load_jobs error: Unable to contact slurm controller");
    if (tool === "sbatch") return { stdout: `${this.nextJob++}\n`, stderr: "" };
    if (tool === "scancel" || (tool === "scontrol" && args[0] === "update")) return { stdout: "", stderr: "" };
    if (tool === "scontrol" && args.join(" ").startsWith("-o show job")) {
      const id = args[3]!;
      if (!this.out[key]) throw new SlurmToolError(tool, 1, "slurm_load_jobs error: Invalid job id specified");
      void id;
    }
    return { stdout: this.out[key] ?? "", stderr: "" };
  }
  queue(...lines: string[]) {
    this.out[`squeue -h -a -t all -o ${SQUEUE_FORMAT}`] = lines.join("\n") + "\n";
  }
  of(tool: string) {
    return this.calls.filter((c) => c[0] === tool);
  }
}

interface Call {
  method: string;
  path: string;
  body?: unknown;
}

/** The control plane as the bridge sees it: its answers scripted, its requests recorded. */
class FakePlane {
  calls: Call[] = [];
  assignments = new Map<string, unknown[]>();
  down = new Set<string>();
  unreachable = false;
  client(): Client {
    return {
      call: async <T>(method: string, p: string, body?: unknown): Promise<T> => {
        if (this.unreachable || [...this.down].some((d) => p.includes(d))) throw new Error("connect ECONNREFUSED");
        this.calls.push({ method, path: p, body });
        if (method === "GET" && p === "/api/clusters") return { data: [{ id: "c1", name: "hpc", kind: "slurm" }] } as T;
        if (method === "PUT") return { slurm: {} } as T;
        if (p === "/api/clusters/nodes") {
          const name = (body as { hostname: string }).hostname;
          return { node: { id: `node-${name}` }, gpus: [0, 1].map((i) => ({ id: `${name}-g${i}`, index: i, status: "available" })) } as T;
        }
        const beat = /^\/api\/clusters\/nodes\/node-(\w+)\/heartbeat$/.exec(p);
        if (beat)
          return { node: {}, assignments: this.assignments.get(beat[1]!) ?? [], lease_s: 90, slurm: { drain: false, reason: null } } as T;
        if (method === "POST" && p.endsWith("/slurm")) {
          const state = (body as { state: string }).state;
          if (state === "SUBMITTING")
            return {
              slurm: {},
              submission: {
                account: "gf-acme",
                gpu_type: "H100",
                duration_s: 600,
                nodes: [...this.assignments].flatMap(([n, as]) =>
                  (as as Array<{ job_id: string; gpu_ids: string[] }>)
                    .filter((a) => a.job_id === JOB)
                    .map((a) => ({ hostname: n, gpu_ids: a.gpu_ids })),
                ),
              },
            } as T;
          return { slurm: {} } as T;
        }
        if (method === "PATCH" || p.endsWith("/logs")) return {} as T;
        throw new ApiError(404, { error: { code: "not_found" } });
      },
    };
  }
  of(method: string, match: RegExp) {
    return this.calls.filter((c) => c.method === method && match.test(c.path));
  }
}

const assign = (gpus: string[]) => ({
  kind: "job",
  job_id: JOB,
  attempt: 1,
  fence: FENCE,
  gpu_ids: gpus,
  logs_path: `/api/jobs/${JOB}/logs`,
  outputs_path: `/api/jobs/${JOB}/outputs`,
  report_token: "t",
  image: "busybox:latest",
  command: "echo hi",
  duration_s: 600,
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function world(o: { now?: () => number; dir?: string } = {}) {
  const dir = o.dir ?? mkdtempSync(path.join(os.tmpdir(), "gf-bridge-unit-"));
  if (!o.dir) dirs.push(dir);
  const slurm = new FakeSlurm();
  const plane = new FakePlane();
  const log: string[] = [];
  const make = () =>
    new SlurmBridge({
      tools: slurm,
      client: plane.client(),
      hot: plane.client(),
      book: new SlurmBook(path.join(dir, "placements.json")),
      reports: new ReportQueue(path.join(dir, "reports.json")),
      logs: new LogSpool(path.join(dir, "logs")),
      baseUrl: "http://cp",
      bridgeId: "bridge-0001",
      host: "login1",
      version: "test",
      user: "gfbridge",
      outputDir: path.join(dir, "out"),
      container: { mode: "wrapper", wrapper: "/usr/bin/apptainer-run" },
      naming: parseGpuNaming("h100=H100", undefined),
      partitions: [],
      pendingTimeoutS: 300,
      heartbeatConcurrency: 2,
      toolPath: "/usr/bin",
      log: (m) => log.push(m),
      ...(o.now ? { now: o.now } : {}),
    });
  return { dir, slurm, plane, log, bridge: make(), make };
}

describe("the Slurm bridge", () => {
  it("mirrors the nodes, submits an assigned placement once, and follows it to its end", async () => {
    const w = world();
    w.plane.assignments.set("n1", [assign(["n1-g0"])]);
    const first = await w.bridge.cycle();
    expect(first).toMatchObject({ ok: true, nodes: 2, heartbeats: 2, submitted: 1 });
    expect(w.plane.of("POST", /^\/api\/clusters\/nodes$/)).toHaveLength(2);
    const [sbatch] = w.slurm.of("sbatch");
    expect(sbatch).toEqual(
      expect.arrayContaining([`--comment=${COMMENT}`, "--nodelist=n1", "--gres=gpu:h100:1", "--account=gf-acme", "--no-requeue"]),
    );
    // the same assignment next cycle: nothing submitted again
    w.slurm.queue(queueLine("100", "RUNNING", "gfbridge", "n1", COMMENT));
    expect((await w.bridge.cycle()).submitted).toBe(0);
    expect(w.slurm.of("sbatch")).toHaveLength(1);
    expect(w.plane.of("POST", /\/slurm$/).map((c) => (c.body as { state: string }).state)).toEqual(["SUBMITTING", "RUNNING"]);
    // it ends: its Slurm state, then its exit, in that order
    w.slurm.queue(queueLine("100", "COMPLETED", "gfbridge", "n1", COMMENT));
    w.slurm.out["scontrol -o show job 100"] =
      `JobId=100 JobState=COMPLETED Reason=None ExitCode=0:0 StartTime=1796158000 EndTime=1796158060 UserId=gfbridge(990) Comment=${COMMENT}`;
    await w.bridge.cycle();
    const ends = w.plane.calls.filter((c) => (c.method === "POST" && c.path.endsWith("/slurm")) || c.method === "PATCH").slice(-2);
    expect(
      ends.map((c) => [c.method, (c.body as { state?: string; status?: string }).state ?? (c.body as { status: string }).status]),
    ).toEqual([
      ["POST", "COMPLETED"],
      ["PATCH", "completed"],
    ]);
    expect((ends[0]!.body as { ended_at: string }).ended_at).toBe(new Date(1796158060_000).toISOString());
  });

  it("an answer of Slurm it cannot read, or a tool that fails, reports nothing and changes nothing", async () => {
    const w = world();
    w.plane.assignments.set("n1", [assign(["n1-g0"])]);
    await w.bridge.cycle();
    w.slurm.queue(queueLine("100", "RUNNING", "gfbridge", "n1", COMMENT));
    await w.bridge.cycle();
    const before = w.plane.calls.length;
    for (const garbage of ["\u0000\u0001binary", "<html>502 Bad Gateway</html>", "NodeName=", "||||||||", "%%%%"]) {
      w.slurm.out["scontrol -o show node"] = garbage;
      const r = await w.bridge.cycle();
      expect(r.ok, garbage).toBe(false);
    }
    w.slurm.out["scontrol -o show node"] = `${node("n1")}\n${node("n2")}\n`;
    w.slurm.fail.add("squeue");
    expect((await w.bridge.cycle()).ok).toBe(false);
    expect(w.plane.calls.length).toBe(before);
    expect(w.slurm.of("scancel")).toEqual([]);
  });

  it("never crashes and never reports a state or exit from outputs of any shape", async () => {
    const w = world();
    w.plane.assignments.set("n1", [assign(["n1-g0"])]);
    await w.bridge.cycle();
    w.slurm.queue(queueLine("100", "RUNNING", "gfbridge", "n1", COMMENT));
    await w.bridge.cycle();
    const reportsBefore = w.plane.calls.filter((c) => c.method === "PATCH" || c.path.endsWith("/slurm")).length;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          nodes: fc.string({ maxLength: 300 }),
          // text, not an empty queue: an empty squeue is Slurm saying the job is gone (then asked of
          // scontrol, which here knows no such job: a vanished job is ended, as it should be)
          queue: fc.string({ minLength: 1, maxLength: 300 }).filter((q) => q.trim().length > 0),
          gres: fc.string({ maxLength: 100 }),
        }),
        async (o) => {
          w.slurm.out["scontrol -o show node"] = o.nodes;
          w.slurm.out["sinfo -N -h -O NodeList:|,GresUsed:|"] = o.gres;
          w.slurm.out[`squeue -h -a -t all -o ${SQUEUE_FORMAT}`] = o.queue;
          await w.bridge.cycle(); // resolves, whatever it read
        },
      ),
      { numRuns: 60 },
    );
    const after = w.plane.calls.filter((c) => c.method === "PATCH" || c.path.endsWith("/slurm"));
    // random text never ended the placement (it would need its comment, its user and a final state)
    expect(after.slice(reportsBefore).filter((c) => c.method === "PATCH")).toEqual([]);
  });

  it("a skipped squeue line is never read as the job being gone", async () => {
    const w = world();
    w.plane.assignments.set("n1", [assign(["n1-g0"])]);
    await w.bridge.cycle();
    w.slurm.queue(queueLine("100", "RUNNING", "gfbridge", "n1", COMMENT));
    await w.bridge.cycle();
    w.slurm.queue(queueLine("101", "RUNNING", "alice", "n2", "(null)"), "100|100|RUNNING|half a line");
    expect((await w.bridge.cycle()).ok).toBe(true);
    expect(w.plane.of("PATCH", /./)).toEqual([]);
    expect(w.slurm.calls.filter((c) => c.join(" ").startsWith("scontrol -o show job"))).toEqual([]);
  });

  it("cancels work no longer assigned only when every node's heartbeat answered", async () => {
    const w = world();
    w.plane.assignments.set("n1", [assign(["n1-g0"])]);
    await w.bridge.cycle();
    w.slurm.queue(queueLine("100", "RUNNING", "gfbridge", "n1", COMMENT));
    w.plane.assignments.set("n1", []);
    w.plane.down.add("node-n2"); // n2's heartbeat does not get through this cycle
    await w.bridge.cycle();
    expect(w.slurm.of("scancel")).toEqual([]);
    w.plane.down.clear();
    await w.bridge.cycle();
    expect(w.slurm.of("scancel")).toEqual([["scancel", "100"]]);
    // no report of a run the control plane took away
    w.slurm.queue(queueLine("100", "CANCELLED", "gfbridge", "n1", COMMENT));
    await w.bridge.cycle();
    expect(w.plane.of("PATCH", /./)).toEqual([]);
  });

  it("a bridge that crashed after sbatch finds its job by the comment, and never submits it again", async () => {
    const w = world();
    w.plane.assignments.set("n1", [assign(["n1-g0"])]);
    w.slurm.fail.add("sbatch"); // the controller did not answer: certainly not submitted
    await w.bridge.cycle();
    w.slurm.fail.delete("sbatch");
    // sbatch ran this time, but the bridge died before it recorded the id
    const book = new SlurmBook(path.join(w.dir, "placements.json"));
    expect(book.get(KEY)?.phase).toBe("preparing");
    book.update(KEY, { phase: "submitting", submittingSince: new Date().toISOString() });
    w.slurm.queue(queueLine("200", "RUNNING", "gfbridge", "n1", COMMENT));
    const restarted = w.make();
    await restarted.cycle();
    expect(w.slurm.of("sbatch")).toHaveLength(1); // the failed call only
    expect(new SlurmBook(path.join(w.dir, "placements.json")).get(KEY)).toMatchObject({ phase: "submitted", slurmJobId: "200" });
  });

  it("sbatch called but no such job in Slurm: reported interrupted after a grace, never submitted again", async () => {
    let now = Date.now();
    const w = world({ now: () => now });
    w.plane.assignments.set("n1", [assign(["n1-g0"])]);
    const book = new SlurmBook(path.join(w.dir, "placements.json"));
    book.add({
      key: KEY,
      jobId: JOB,
      attempt: 1,
      fence: FENCE,
      phase: "submitting",
      gpusByNode: { n1: 1 },
      logsPath: `/api/jobs/${JOB}/logs`,
      offsets: { stdout: 0, stderr: 0 },
      takenAt: new Date(now).toISOString(),
      submittingSince: new Date(now).toISOString(),
    });
    const b = w.make();
    await b.cycle();
    expect(w.plane.of("PATCH", /./)).toEqual([]);
    now += 120_000;
    await b.cycle();
    expect(w.plane.of("PATCH", /./).map((c) => (c.body as { status: string }).status)).toEqual(["interrupted"]);
    expect(w.slurm.of("sbatch")).toEqual([]);
  });

  it("a job of another user with our comment is theirs: foreign load, not our placement", async () => {
    const w = world();
    w.slurm.queue(queueLine("300", "RUNNING", "mallory", "n2", COMMENT));
    w.slurm.out["sinfo -N -h -O NodeList:|,GresUsed:|"] = "n1|gpu:h100:0(IDX:N/A)|\nn2|gpu:h100:1(IDX:0)|\n";
    await w.bridge.cycle();
    const beat = w.plane.of("POST", /node-n2\/heartbeat/)[0]!.body as { slurm: { foreign: unknown[] } };
    expect(beat.slurm.foreign).toEqual([
      { slurm_job_id: "300", user: "mallory", partition: "gpu", gpus: 1, started_at: expect.any(String) },
    ]);
    expect(w.plane.of("POST", /\/slurm$/)).toEqual([]);
    expect(w.slurm.of("scancel")).toEqual([]);
  });

  it("cut off from the control plane for its lease, it cancels its Slurm jobs (they have been moved)", async () => {
    let now = Date.now();
    const w = world({ now: () => now });
    w.plane.assignments.set("n1", [assign(["n1-g0"])]);
    await w.bridge.cycle();
    w.slurm.queue(queueLine("100", "RUNNING", "gfbridge", "n1", COMMENT));
    await w.bridge.cycle();
    w.plane.down.add("heartbeat");
    now += 60_000;
    await w.bridge.cycle();
    expect(w.slurm.of("scancel")).toEqual([]);
    now += 60_000;
    await w.bridge.cycle();
    expect(w.slurm.of("scancel")).toEqual([["scancel", "100"]]);
  });
});

describe("the Slurm bridge's bundle", () => {
  it("bundles without any package or server module: lib code only from pure helpers", async () => {
    const { build } = await import("esbuild");
    const out = await build({
      entryPoints: [path.resolve("agent/src/slurm/main.ts")],
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
      "lib/fleet/node-lifecycle.ts",
      "lib/slurm/gres.ts",
      "lib/slurm/hostlist.ts",
      "lib/slurm/job-state.ts",
      "lib/slurm/node-state.ts",
      "lib/slurm/submission.ts",
      "lib/vocabulary.ts",
    ]);
  });
});
