import { z } from "zod";

export const MAX_SAMPLES_PER_REQUEST = 5_000;

/** One GPU sample. Validated one by one: a bad sample is reported by index, the rest are stored. */
export const gpuSample = z
  .strictObject({
    gpu_id: z.uuid("Must be a GPU id").optional(),
    gpu_uuid: z.string().trim().min(1).max(128).optional(),
    recorded_at: z.iso.datetime({ offset: true, message: "Must be an ISO-8601 time" }).optional(),
    utilization_pct: z.number().min(0).max(100),
    memory_used_mb: z.number().int().min(0).max(10_000_000),
    memory_total_mb: z.number().int().min(1).max(10_000_000).optional(),
    temperature_c: z.number().min(-40).max(150),
    power_draw_w: z.number().min(0).max(5_000),
    xid_errors: z.array(z.number().int().min(0).max(100_000)).max(50).optional(),
  })
  .refine((s) => (s.gpu_id === undefined) !== (s.gpu_uuid === undefined), {
    message: "Give exactly one of gpu_id or gpu_uuid",
    path: ["gpu_id"],
  })
  .refine((s) => s.memory_total_mb === undefined || s.memory_used_mb <= s.memory_total_mb, {
    message: "Larger than memory_total_mb",
    path: ["memory_used_mb"],
  });

export type GpuSample = z.output<typeof gpuSample>;

export const metricsBatchBody = z.strictObject({ metrics: z.array(z.unknown()).min(1, "Send at least one sample") }).meta({
  id: "MetricsBatch",
  description: `Up to ${MAX_SAMPLES_PER_REQUEST} samples; each is validated on its own and rejected ones are reported by index.`,
  example: {
    metrics: [
      {
        gpu_uuid: "GPU-3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40",
        utilization_pct: 87.5,
        memory_used_mb: 61234,
        temperature_c: 71,
        power_draw_w: 612.4,
      },
    ],
  },
});

export const metricsBatchReply = z
  .object({
    accepted: z.number().int(),
    stored: z.number().int().meta({ description: "accepted minus samples already stored earlier (re-sent batches)" }),
    rejected: z.array(z.object({ index: z.number().int(), error: z.string() })),
  })
  .meta({ id: "MetricsBatchResult" });

export const seriesQuery = z.strictObject({
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  step: z.coerce.number().int().min(1).max(86_400).optional().meta({ description: "seconds per point; ≥ 60 reads the per-minute rollups" }),
});

const seriesPoint = z.object({
  t: z.string(),
  samples: z.number(),
  utilization_avg: z.number(),
  utilization_max: z.number(),
  memory_used_avg_mb: z.number(),
  memory_used_max_mb: z.number(),
  temperature_avg_c: z.number(),
  temperature_max_c: z.number(),
  power_avg_w: z.number(),
  power_max_w: z.number(),
});

export const seriesReply = z
  .object({
    gpu_id: z.string(),
    from: z.string(),
    to: z.string(),
    step_s: z.number(),
    source: z.enum(["raw", "rollup"]),
    points: z.array(seriesPoint),
  })
  .meta({ id: "GpuMetricSeries" });
