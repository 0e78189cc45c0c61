import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";

// What this process measures as it works: HTTP requests by operation, scheduling cycles, metric
// ingestion, background runs, and Node's own runtime figures. One registry per process (each app
// instance and each ingest server is scraped on its own; Prometheus sums them). Every label takes
// values from a bounded set: operation ids, methods, status classes, job ids of the registry.

const globalForMetrics = globalThis as unknown as { gpuforgeMetrics?: ReturnType<typeof build> };

function build() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "gpuforge_" });
  return {
    registry,
    httpDuration: new Histogram({
      name: "gpuforge_http_request_duration_seconds",
      help: "API requests by operation (the route template's operation id), method and status class",
      labelNames: ["operation", "method", "status_class"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    schedulerCycle: new Histogram({
      name: "gpuforge_scheduler_cycle_duration_seconds",
      help: "Scheduling cycles run by this process, database commit included",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    schedulerPlacements: new Counter({
      name: "gpuforge_scheduler_placements_total",
      help: "Jobs placed by this process's scheduling cycles",
      registers: [registry],
    }),
    schedulerConsidered: new Counter({
      name: "gpuforge_scheduler_jobs_considered_total",
      help: "Waiting jobs this process's cycles considered",
      registers: [registry],
    }),
    ingestSamples: new Counter({
      name: "gpuforge_ingest_samples_total",
      help: "GPU metric samples received by this process: stored, accepted but already stored (re-sent), rejected",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    ingestReports: new Counter({
      name: "gpuforge_ingest_reports_total",
      help: "Metric reports (requests) ingested by this process",
      registers: [registry],
    }),
    backgroundRuns: new Counter({
      name: "gpuforge_background_runs_total",
      help: "Background job runs by this process: ok, failed, or skipped (another instance held the job's lock)",
      labelNames: ["job", "outcome"] as const,
      registers: [registry],
    }),
    backgroundDuration: new Histogram({
      name: "gpuforge_background_run_duration_seconds",
      help: "Background job runs by this process that ran",
      labelNames: ["job"] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
      registers: [registry],
    }),
  };
}

export function processMetrics() {
  globalForMetrics.gpuforgeMetrics ??= build();
  return globalForMetrics.gpuforgeMetrics;
}

export const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;
