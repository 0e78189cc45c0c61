// The soak's tenants at work, through the public API with their own keys: a steady stream of
// jobs (single-node, gangs over two nodes, failing ones that spend their retries), pipelines
// (fan-out and fan-in), inference endpoints that scale, reservations of whole nodes with work run
// inside them, and cancellations. Each tenant keeps a few jobs waiting and tops up as the
// scheduler places them, so the load follows what the platform absorbs. A new kind of work is one
// more entry in WORKLOAD_KINDS.
import { ApiError, createClient, type Client } from "../../agent/src/client";
import type { SoakTenant } from "./seed";

export interface WorkloadContext {
  tenant: SoakTenant;
  client: Client;
  gpuTypes: string[];
  rng: () => number;
  /** the longest a job of this run should last, so most finish within it */
  maxDurationS: number;
  /** jobs this tenant submitted that may still run (cancellations pick among them) */
  recentJobs: string[];
  endpoints: Array<{ id: string; replicas: number }>;
  /** the tenant's latest reservation (one at a time), while it may still hold nodes */
  reservation?: { id: string; startsAt: number; endsAt: number };
  reservationGpuType?: string;
}

interface WorkloadKind {
  name: string;
  /** how often it is picked, relative to the others */
  weight: number;
  /** submits one piece of work; returns the ids of jobs it created directly */
  submit(ctx: WorkloadContext): Promise<string[]>;
  /** refusals that are part of this kind's normal life (counted as declined, not as errors) */
  declines?: (e: ApiError) => boolean;
}

const errorCode = (e: ApiError) => (e.body as { error?: { code?: string } } | null)?.error?.code;

const pick = <T>(rng: () => number, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
const between = (rng: () => number, lo: number, hi: number) => Math.round(lo + rng() * (hi - lo));
const IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3";

async function submitJob(ctx: WorkloadContext, body: Record<string, unknown>): Promise<string[]> {
  const { job } = await ctx.client.call<{ job: { id: string } }>("POST", "/api/jobs", {
    image: IMAGE,
    priority: between(ctx.rng, 3, 7),
    ...body,
  });
  return [job.id];
}

const WORKLOAD_KINDS: WorkloadKind[] = [
  {
    name: "job",
    weight: 10,
    submit: (ctx) =>
      submitJob(ctx, {
        name: `train-${between(ctx.rng, 1, 9999)}`,
        gpu_count: pick(ctx.rng, [1, 1, 2, 2, 4, 8]),
        gpu_type: pick(ctx.rng, ctx.gpuTypes),
        command: "torchrun train.py --config configs/finetune.yaml",
        duration_s: between(ctx.rng, 20, ctx.maxDurationS),
        max_retries: 1,
      }),
  },
  {
    // sixteen GPUs: two whole nodes, placed together or not at all
    name: "gang",
    weight: 2,
    submit: (ctx) =>
      submitJob(ctx, {
        name: `gang-${between(ctx.rng, 1, 9999)}`,
        gpu_count: 16,
        gpu_type: pick(ctx.rng, ctx.gpuTypes),
        command: "torchrun --nnodes 2 pretrain.py",
        duration_s: between(ctx.rng, 30, ctx.maxDurationS),
        max_retries: 1,
      }),
  },
  {
    // exits 3 on every attempt: one retry after its backoff, then failed for good
    name: "failing",
    weight: 2,
    submit: (ctx) =>
      submitJob(ctx, {
        name: `flaky-${between(ctx.rng, 1, 9999)}`,
        gpu_count: pick(ctx.rng, [1, 2]),
        gpu_type: pick(ctx.rng, ctx.gpuTypes),
        command: "python eval.py --strict; exit 3",
        duration_s: between(ctx.rng, 10, 40),
        max_retries: 1,
      }),
  },
  {
    name: "pipeline",
    weight: 2,
    async submit(ctx) {
      const gpu_type = pick(ctx.rng, ctx.gpuTypes);
      const step = (name: string, gpu_count: number, depends_on?: string[]) => ({
        name,
        gpu_count,
        gpu_type,
        image: IMAGE,
        command: `python ${name}.py`,
        duration_s: between(ctx.rng, 10, 30),
        ...(depends_on ? { depends_on } : {}),
      });
      await ctx.client.call("POST", "/api/pipelines", {
        name: `rag-refresh-${between(ctx.rng, 1, 9999)}`,
        steps: [step("prep", 1), step("embed-a", 2, ["prep"]), step("embed-b", 2, ["prep"]), step("index", 1, ["embed-a", "embed-b"])],
      });
      return [];
    },
  },
  {
    // one endpoint per tenant, created once and then scaled between one and three replicas
    name: "endpoint",
    weight: 1,
    async submit(ctx) {
      const existing = ctx.endpoints[0];
      if (!existing) {
        const { endpoint } = await ctx.client.call<{ endpoint: { id: string } }>("POST", "/api/endpoints", {
          name: `${ctx.tenant.name}-chat`,
          model: "meta-llama/Llama-3.1-8B-Instruct",
          image: "vllm/vllm-openai:v0.6.3",
          gpu_type: pick(ctx.rng, ctx.gpuTypes),
          gpus_per_replica: 1,
          replicas: 1,
          max_replicas: 3,
          sla_p95_ms: 450,
          sla_availability_pct: 99,
        });
        ctx.endpoints.push({ id: endpoint.id, replicas: 1 });
        return [];
      }
      existing.replicas = existing.replicas >= 3 ? 1 : existing.replicas + 1;
      await ctx.client.call("PATCH", `/api/endpoints/${existing.id}`, { replicas: existing.replicas });
      return [];
    },
  },
  {
    // whole nodes for a few minutes, booked a little ahead: jobs named into it wait for its start and
    // run there at no charge of their own while the reservation is billed for its whole window; now
    // and then the tenant releases it early (work inside stops, billing stops at the release)
    name: "reservation",
    weight: 1,
    async submit(ctx) {
      const now = Date.now();
      const r = ctx.reservation;
      if (r && r.endsAt - now > 45_000) {
        if (now > r.startsAt && ctx.rng() < 0.25) {
          ctx.reservation = undefined;
          await ctx.client.call("DELETE", `/api/reservations/${r.id}`);
          return [];
        }
        return submitJob(ctx, {
          name: `reserved-${between(ctx.rng, 1, 9999)}`,
          reservation_id: r.id,
          gpu_count: pick(ctx.rng, [2, 4, 8]),
          gpu_type: ctx.reservationGpuType,
          command: "torchrun train.py --config configs/reserved.yaml",
          duration_s: between(ctx.rng, 15, Math.min(ctx.maxDurationS, (r.endsAt - Math.max(now, r.startsAt)) / 1000 - 20)),
          max_retries: 1,
        });
      }
      const gpuType = pick(ctx.rng, ctx.gpuTypes);
      const startsAt = now + between(ctx.rng, 15, 60) * 1000;
      const endsAt = startsAt + between(ctx.rng, 120, 300) * 1000;
      const { reservation } = await ctx.client.call<{ reservation: { id: string } }>("POST", "/api/reservations", {
        gpu_type: gpuType,
        node_count: pick(ctx.rng, [1, 1, 2]),
        starts_at: new Date(startsAt).toISOString(),
        ends_at: new Date(endsAt).toISOString(),
      });
      ctx.reservation = { id: reservation.id, startsAt, endsAt };
      ctx.reservationGpuType = gpuType;
      return [];
    },
    // no whole node free for the window (409 no_capacity) or more than the quota at some moment of it (422)
    declines: (e) => (e.status === 409 && errorCode(e) === "no_capacity") || e.status === 422,
  },
  {
    // a tenant changes its mind: one of its recent jobs, waiting or running, is cancelled
    name: "cancel",
    weight: 1,
    async submit(ctx) {
      const id = ctx.recentJobs.length ? pick(ctx.rng, ctx.recentJobs) : undefined;
      if (!id) return [];
      await ctx.client.call("PATCH", `/api/jobs/${id}`, { status: "cancelled" }).catch((e: unknown) => {
        if (!(e instanceof ApiError && e.status === 409)) throw e; // it had already ended
      });
      return [];
    },
  },
];

interface WorkloadStats {
  by_kind: Record<string, number>;
  jobs_submitted: number;
  /** refusals a kind expects (a reservation with no capacity for its window), by kind and code */
  declined: Record<string, number>;
  api_errors: Record<string, number>;
}

/**
 * Runs every tenant's loop until stop(): every `everyS` a tenant with fewer than `waiting` jobs
 * queued or blocked submits one piece of work of a kind picked by weight.
 */
export function startWorkload(opts: {
  appUrls: string[];
  tenants: SoakTenant[];
  gpuTypes: string[];
  rng: () => number;
  maxDurationS: number;
  everyS?: number;
  waiting?: number;
  log: (m: string) => void;
}) {
  const stats: WorkloadStats = {
    by_kind: Object.fromEntries(WORKLOAD_KINDS.map((k) => [k.name, 0])),
    jobs_submitted: 0,
    declined: {},
    api_errors: {},
  };
  /** every job id a submit answered with: each must exist, running or finished with a reason */
  const submitted = new Set<string>();
  const totalWeight = WORKLOAD_KINDS.reduce((n, k) => n + k.weight, 0);
  const choose = () => {
    let r = opts.rng() * totalWeight;
    for (const k of WORKLOAD_KINDS) if ((r -= k.weight) < 0) return k;
    return WORKLOAD_KINDS[0]!;
  };
  const contexts: WorkloadContext[] = opts.tenants.map((tenant, i) => ({
    tenant,
    client: createClient({
      baseUrl: opts.appUrls.map((_, k) => opts.appUrls[(i + k) % opts.appUrls.length]!),
      key: tenant.key,
      retryForMs: 10_000,
    }),
    gpuTypes: opts.gpuTypes,
    rng: opts.rng,
    maxDurationS: opts.maxDurationS,
    recentJobs: [],
    endpoints: [],
  }));
  const countError = (e: unknown) => {
    const key = e instanceof ApiError ? `http_${e.status}` : "unreachable";
    stats.api_errors[key] = (stats.api_errors[key] ?? 0) + 1;
  };
  let stopped = false;
  const waitingCount = async (ctx: WorkloadContext) => {
    const [queued, blocked] = await Promise.all(
      ["queued", "blocked"].map((s) => ctx.client.call<{ data: unknown[] }>("GET", `/api/jobs?status=${s}&limit=${opts.waiting ?? 3}`)),
    );
    return queued!.data.length + blocked!.data.length;
  };
  const loop = async (ctx: WorkloadContext) => {
    while (!stopped) {
      let kind: WorkloadKind | undefined;
      try {
        if ((await waitingCount(ctx)) < (opts.waiting ?? 3)) {
          kind = choose();
          const ids = await kind.submit(ctx);
          stats.by_kind[kind.name]!++;
          stats.jobs_submitted += ids.length;
          for (const id of ids) submitted.add(id);
          ctx.recentJobs = [...ctx.recentJobs, ...ids].slice(-20);
        }
      } catch (e) {
        if (kind?.declines && e instanceof ApiError && kind.declines(e)) {
          const key = `${kind.name}:${errorCode(e) ?? e.status}`;
          stats.declined[key] = (stats.declined[key] ?? 0) + 1;
        } else countError(e);
      }
      await new Promise((r) => setTimeout(r, (opts.everyS ?? 2) * 1000 * (0.5 + opts.rng())));
    }
  };
  const loops = contexts.map(loop);
  return {
    stats,
    submitted,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
