// The demo's tenants at work: submits jobs through the public API for each demo tenant key, so
// the simulated fleet has something to run and the pages show a living queue. Bounded: a tenant
// with enough waiting work submits nothing more.
import { createClient } from "./client";

const NAMES = ["llama-finetune", "embed-batch", "eval-suite", "rl-rollouts", "vision-pretrain", "rerank-train", "sweep-lr", "distill-7b"];

export function startDemoWorkload(opts: { baseUrl: string; tenantKeys: string[]; gpuTypes: string[]; everyS?: number; log?: (m: string) => void }) {
  const clients = opts.tenantKeys.map((key) => createClient({ baseUrl: opts.baseUrl, key, retryForMs: 5_000, log: opts.log }));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const pick = <T,>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!;

  const tick = async () => {
    for (const client of clients) {
      try {
        const waiting = await client.call<{ data: unknown[] }>("GET", "/api/jobs?status=queued&limit=10");
        if (waiting.data.length >= 4) continue;
        await client.call("POST", "/api/jobs", {
          name: `${pick(NAMES)}-${Math.floor(Math.random() * 1000)}`,
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
