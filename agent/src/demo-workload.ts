// The demo's tenants at work: submits jobs through the public API for each demo tenant key, so
// the simulated fleet has something to run and the pages show a living queue. Bounded: a tenant
// with enough waiting work submits nothing more. Each tenant also keeps one inference endpoint
// (created once through the API; the simulator serves its traffic) and one agentic pipeline
// running: the plan → act → check loop template against that endpoint, started again once the
// previous one finished. Each tenant also keeps a notebook pod (created once; the simulator runs
// it) and calls its endpoint through the inference gateway a few times a tick, so the gateway's
// own figures show on the endpoint's page.
import { createHash } from "node:crypto";
import { PIPELINE_TEMPLATES } from "../../lib/pipelines/templates";
import { createClient } from "./client";

/** Gateway calls per endpoint each tick (every 20 s): about 24 a minute. */
const CALLS_PER_TICK = 8;
const NAMES = ["llama-finetune", "embed-batch", "eval-suite", "rl-rollouts", "vision-pretrain", "rerank-train", "sweep-lr", "distill-7b"];
// what the demo tenants run: real-looking images and commands (the simulator plays the containers)
const WORKLOADS = [
  {
    image: "nvcr.io/nvidia/pytorch:24.05-py3",
    command: "torchrun --nproc_per_node=$(nvidia-smi -L | wc -l) train.py --config configs/finetune.yaml",
  },
  { image: "ghcr.io/acme/embeddings:1.4.2", command: "python embed.py --input s3://corpus/shard-0042 --batch-size 512" },
  { image: "nvcr.io/nvidia/pytorch:24.05-py3", command: "python -m lm_eval --model hf --tasks mmlu,hellaswag --batch_size 16" },
  { image: "rayproject/ray-ml:2.9.0-gpu", command: "python rollout.py --episodes 4096" },
];

/** A well-formed demo SSH public key (an ed25519 key nobody holds the private half of). */
export function demoSshKey(seed = "gpuforge-demo"): string {
  const type = Buffer.from("ssh-ed25519");
  const key = createHash("sha256").update(seed).digest();
  const u32 = (n: number) => Buffer.from([0, 0, 0, n]);
  return `ssh-ed25519 ${Buffer.concat([u32(type.length), type, u32(key.length), key]).toString("base64")} demo@gpuforge`;
}

export function startDemoWorkload(opts: {
  baseUrl: string;
  tenantKeys: string[];
  gpuTypes: string[];
  everyS?: number;
  log?: (m: string) => void;
}) {
  const clients = opts.tenantKeys.map((key) => createClient({ baseUrl: opts.baseUrl, key, retryForMs: 5_000, log: opts.log }));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!;

  const DEMO_ENDPOINTS = [
    {
      name: "chat-8b",
      model: "meta-llama/Llama-3.1-8B-Instruct",
      image: "vllm/vllm-openai:v0.6.3",
      gpus_per_replica: 1,
      replicas: 2,
      max_replicas: 4,
      sla_p95_ms: 450,
      sla_availability_pct: 99.5,
      autoscale_metric: "requests_per_replica",
      autoscale_target: 8,
    },
    {
      name: "embed-large",
      model: "BAAI/bge-large-en-v1.5",
      image: "ghcr.io/huggingface/text-embeddings-inference:1.5",
      gpus_per_replica: 1,
      replicas: 1,
      sla_p95_ms: 400,
      sla_availability_pct: 99,
    },
  ];
  const endpointsMade = new Set<number>();
  const ensureEndpoint = async (client: (typeof clients)[number], i: number) => {
    if (endpointsMade.has(i)) return;
    const spec = DEMO_ENDPOINTS[i % DEMO_ENDPOINTS.length]!;
    const existing = await client.call<{ data: Array<{ name: string }> }>("GET", "/api/endpoints?limit=50");
    if (!existing.data.some((e) => e.name === spec.name))
      await client.call("POST", "/api/endpoints", { ...spec, gpu_type: opts.gpuTypes[i % opts.gpuTypes.length] });
    endpointsMade.add(i);
  };

  const podsMade = new Set<number>();
  const ensurePod = async (client: (typeof clients)[number], i: number) => {
    if (podsMade.has(i)) return;
    const existing = await client.call<{ data: Array<{ name: string }> }>("GET", "/api/pods?limit=50");
    if (!existing.data.some((p) => p.name === "notebook")) {
      await client.call("POST", "/api/pods", {
        name: "notebook",
        gpu_type: opts.gpuTypes[i % opts.gpuTypes.length],
        gpu_count: 1,
        image: "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
        ports: [8888],
        ssh_public_key: demoSshKey(),
      });
    }
    podsMade.add(i);
  };

  // a little real traffic through the inference gateway: its per-minute figures feed the SLA
  const callEndpoint = async (client: (typeof clients)[number], i: number) => {
    const spec = DEMO_ENDPOINTS[i % DEMO_ENDPOINTS.length]!;
    const endpoints = await client.call<{ data: Array<{ id: string; name: string; status: string }> }>("GET", "/api/endpoints?limit=50");
    const ep = endpoints.data.find((e) => e.name === spec.name && ["ready", "scaling", "degraded"].includes(e.status));
    if (!ep) return;
    // enough calls that one slow answer does not decide a minute's p95 by itself (with a handful,
    // the p95 is the slowest): the SLA the demo is created with judges a real distribution
    for (let k = 0; k < CALLS_PER_TICK; k++) {
      await client
        .call(
          "POST",
          `/v1/endpoints/${ep.id}/v1/chat/completions`,
          { model: spec.model, messages: [{ role: "user", content: `Summarise run ${Math.floor(Math.random() * 1000)} in one line` }] },
          0,
        )
        .catch(() => {});
    }
  };

  const agentLoop = PIPELINE_TEMPLATES.find((t) => t.id === "plan-act-check")!;
  const ensurePipeline = async (client: (typeof clients)[number], i: number) => {
    const spec = DEMO_ENDPOINTS[i % DEMO_ENDPOINTS.length]!;
    const endpoints = await client.call<{ data: Array<{ name: string; status: string }> }>("GET", "/api/endpoints?limit=50");
    // its inference steps need the model serving first
    if (!["ready", "scaling", "degraded"].includes(endpoints.data.find((e) => e.name === spec.name)?.status ?? "")) return;
    const pipelines = await client.call<{ data: Array<{ status: string }> }>("GET", "/api/pipelines");
    if (pipelines.data.some((p) => p.status === "running")) return;
    const body = agentLoop.spec({ gpuType: opts.gpuTypes[i % opts.gpuTypes.length]!, endpoint: spec.name });
    await client.call("POST", "/api/pipelines", { ...body, name: `agent-loop-${Math.floor(Math.random() * 1000)}` });
  };

  const tick = async () => {
    for (const [i, client] of clients.entries()) {
      await ensureEndpoint(client, i).catch((e: unknown) => opts.log?.(`demo endpoint: ${(e as Error).message}`));
      await ensurePipeline(client, i).catch((e: unknown) => opts.log?.(`demo pipeline: ${(e as Error).message}`));
      await ensurePod(client, i).catch((e: unknown) => opts.log?.(`demo pod: ${(e as Error).message}`));
      await callEndpoint(client, i).catch((e: unknown) => opts.log?.(`demo gateway calls: ${(e as Error).message}`));
      try {
        const waiting = await client.call<{ data: unknown[] }>("GET", "/api/jobs?status=queued&limit=10");
        if (waiting.data.length >= 4) continue;
        await client.call("POST", "/api/jobs", {
          name: `${pick(NAMES)}-${Math.floor(Math.random() * 1000)}`,
          ...pick(WORKLOADS),
          gpu_count: pick([1, 1, 2, 2, 4, 8]),
          gpu_type: pick(opts.gpuTypes),
          priority: pick([3, 5, 5, 5, 7]),
          duration_s: 60 + Math.floor(Math.random() * 240),
          max_retries: 1,
        });
      } catch (e) {
        opts.log?.(`demo workload: ${(e as Error).message}`);
      }
    }
  };
  const loop = async () => {
    if (stopped) return;
    await tick();
    timer = setTimeout(loop, (opts.everyS ?? 20) * 1000);
  };
  void loop();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
