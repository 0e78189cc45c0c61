import { z } from "zod";
import { paginationQuery } from "@/lib/http/pagination";
import { imageField, placementRef } from "@/lib/jobs/schemas";
import { AUTOSCALE_METRICS } from "./autoscaler";
import { ENDPOINT_STATUSES, REPLICA_STATUSES } from "./endpoint-lifecycle";

const name = z
  .string()
  .trim()
  .min(1, "Name is required")
  .max(100, "At most 100 characters")
  .regex(/^[a-z0-9][a-z0-9-]*$/, "Lower-case letters, digits and dashes, starting with a letter or digit");
const replicaCount = z.number().int("Must be a whole number").min(1, "At least 1").max(64, "At most 64");
const slaP95 = z.number().int("Whole milliseconds").min(1).max(600_000);
const slaAvailability = z.number().min(50, "At least 50").lt(100, "Below 100 (a 100 % target leaves no error budget)");
const autoscaleTarget = z.number().gt(0, "Must be above 0").max(1_000_000);
const cooldown = z.number().int("Whole seconds").min(30).max(86_400);

export const createEndpointBody = z
  .strictObject({
    tenant_id: z.uuid("Must be a tenant id").optional(),
    name,
    model: z.string().trim().min(1, "Model is required").max(300),
    image: imageField
      .optional()
      .meta({ description: "The serving container image (vLLM, TGI, Triton…); the operator's default serving image when absent" }),
    gpu_type: z
      .string()
      .trim()
      .min(1)
      .max(32)
      .regex(/^[A-Za-z0-9._-]+$/, "Letters, digits, dot, dash, underscore"),
    gpus_per_replica: z.number().int("Must be a whole number").min(1).max(64),
    replicas: replicaCount,
    min_replicas: replicaCount.optional(),
    max_replicas: replicaCount.optional(),
    cluster_id: z.uuid("Must be a cluster id").optional(),
    reservation_id: z
      .uuid("Must be a reservation id")
      .optional()
      .meta({ description: "Serve only from the nodes of this reservation of your own, while it is active" }),
    sla_p95_ms: slaP95.optional(),
    sla_availability_pct: slaAvailability.optional(),
    autoscale_metric: z.enum(AUTOSCALE_METRICS).default("none"),
    autoscale_target: autoscaleTarget.optional(),
    cooldown_s: cooldown.default(300),
    serving_port: z
      .number()
      .int("A whole port number")
      .min(1)
      .max(65_535)
      .optional()
      .meta({ description: "The port the serving container listens on (vLLM's 8000 by default)" }),
    health_path: z
      .string()
      .regex(/^\/[A-Za-z0-9._~/-]{0,199}$/, "A path such as /health: letters, digits and . _ ~ / - only")
      .optional()
      .meta({ description: "What the inference gateway's probes ask each replica for (2xx means in rotation); default /health" }),
  })
  .superRefine((b, ctx) => {
    const min = b.min_replicas ?? b.replicas;
    const max = b.max_replicas ?? b.replicas;
    if (min > b.replicas) ctx.addIssue({ code: "custom", path: ["min_replicas"], message: "Must not exceed replicas" });
    if (max < b.replicas) ctx.addIssue({ code: "custom", path: ["max_replicas"], message: "Must not be below replicas" });
    if (b.autoscale_metric !== "none" && b.autoscale_target === undefined)
      ctx.addIssue({ code: "custom", path: ["autoscale_target"], message: "Required when autoscale_metric is set" });
    if (b.autoscale_metric === "none" && b.autoscale_target !== undefined)
      ctx.addIssue({ code: "custom", path: ["autoscale_target"], message: "Only with an autoscale_metric" });
  })
  .meta({
    id: "CreateEndpoint",
    description:
      "An inference endpoint: replicas of gpus_per_replica GPUs each, placed on distinct nodes when possible. min/max bound the autoscaler (both default to replicas).",
    example: {
      name: "llama-70b-chat",
      model: "meta-llama/Llama-3.1-70B-Instruct",
      gpu_type: "H100",
      gpus_per_replica: 4,
      replicas: 2,
      max_replicas: 4,
      sla_p95_ms: 800,
      sla_availability_pct: 99.5,
      autoscale_metric: "requests_per_replica",
      autoscale_target: 20,
    },
  });

/** The fields PATCH accepts (the settings form adds the endpoint's id to them). */
export const updateEndpointFields = {
  replicas: replicaCount.optional(),
  min_replicas: replicaCount.optional(),
  max_replicas: replicaCount.optional(),
  sla_p95_ms: slaP95.nullable().optional(),
  sla_availability_pct: slaAvailability.nullable().optional(),
  autoscale_metric: z.enum(AUTOSCALE_METRICS).optional(),
  autoscale_target: autoscaleTarget.nullable().optional(),
  cooldown_s: cooldown.optional(),
  stopped: z
    .boolean()
    .optional()
    .meta({ description: "true stops the endpoint (replicas released, billing stops); false starts it again" }),
};

export const updateEndpointBody = z
  .strictObject(updateEndpointFields)
  .refine((b) => Object.keys(b).length > 0, { message: "Nothing to change" })
  .meta({ id: "UpdateEndpoint", example: { replicas: 3, sla_p95_ms: 600 } });

export const listEndpointsQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(ENDPOINT_STATUSES).optional(),
  tenant_id: z.uuid().optional(),
});

const isoTime = z.iso.datetime({ offset: true, message: "Must be an ISO-8601 time" });

const endpointSampleSchema = z
  .strictObject({
    recorded_at: isoTime.optional(),
    replica_id: z.uuid("Must be a replica id of this endpoint").optional(),
    requests: z.number().int("Whole requests").min(0).max(10_000_000),
    errors: z.number().int("Whole requests").min(0).max(10_000_000),
    p50_ms: z.number().min(0).max(3_600_000),
    p95_ms: z.number().min(0).max(3_600_000),
    p99_ms: z.number().min(0).max(3_600_000),
    tokens_per_s: z.number().min(0).max(100_000_000).optional(),
    healthy: z.boolean().default(true).meta({ description: "The replica's own health check; false marks it unhealthy at once" }),
    fence: z
      .uuid("Must be the replica's fence, as its assignment carried it")
      .optional()
      .meta({ description: "Agents: the fence of the replica's placement (required with an agent key)" }),
    serving_url: z
      .url({ protocol: /^https?$/, message: "An http:// or https:// URL" })
      .max(500)
      .optional()
      .meta({
        description:
          "Agents only: where this replica serves requests (its OpenAI-compatible base URL); pipelines' inference steps call it until the inference gateway routes traffic",
      }),
  })
  .superRefine((s, ctx) => {
    if (s.errors > s.requests) ctx.addIssue({ code: "custom", path: ["errors"], message: "Cannot exceed requests" });
    if (s.p50_ms > s.p95_ms) ctx.addIssue({ code: "custom", path: ["p50_ms"], message: "Cannot exceed p95_ms" });
    if (s.p95_ms > s.p99_ms) ctx.addIssue({ code: "custom", path: ["p95_ms"], message: "Cannot exceed p99_ms" });
  });

const MAX_ENDPOINT_SAMPLES = 1000;
export const endpointMetricsBody = z
  .strictObject({
    samples: z
      .array(endpointSampleSchema)
      .min(1, "At least one sample")
      .max(MAX_ENDPOINT_SAMPLES, `At most ${MAX_ENDPOINT_SAMPLES} samples`),
  })
  .meta({
    id: "EndpointMetrics",
    description:
      "Samples from the serving side (or the agent beside it): requests and errors since the previous sample, latency percentiles over it. Each (replica, recorded_at) is stored once.",
    example: {
      samples: [
        {
          replica_id: "5f7c2a1e-0000-4000-8000-000000000001",
          requests: 412,
          errors: 1,
          p50_ms: 180,
          p95_ms: 540,
          p99_ms: 910,
          tokens_per_s: 5200,
        },
      ],
    },
  });

export const timeWindowQuery = z.strictObject({ from: isoTime.optional(), to: isoTime.optional() }).superRefine((q, ctx) => {
  if (q.from && q.to && !(new Date(q.to) > new Date(q.from))) ctx.addIssue({ code: "custom", path: ["to"], message: "Must be after from" });
  if (q.from && q.to && new Date(q.to).getTime() - new Date(q.from).getTime() > 92 * 86_400_000)
    ctx.addIssue({ code: "custom", path: ["from"], message: "A window spans at most 92 days" });
});

/** What the agent of a replica's node reports: the host port it published for the serving port (fenced). */
export const replicaAddressBody = z
  .strictObject({
    ...placementRef,
    host_port: z
      .number()
      .int("A whole port number")
      .min(1024, "Host ports are 1024–65535 (never a privileged port of the node)")
      .max(65_535, "Host ports are 1024–65535"),
  })
  .meta({ id: "ReplicaAddress", example: { attempt: 1, fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11", host_port: 40123 } });

export const createEndpointKeyBody = z
  .strictObject({
    name: z.string().trim().min(1, "Name is required").max(100),
    expires_at: z.iso
      .datetime({ offset: true, error: "A date and time, e.g. 2027-03-01T00:00:00Z" })
      .optional()
      .meta({ description: "From then on the key calls nothing; omitted: it never expires" }),
    service_account_id: z.uuid("Must be a service account id").optional().meta({
      description:
        "Make the key for this service account of the endpoint's tenant, to outlive any one person. Omitted: the key is yours and dies with your rights",
    }),
  })
  .meta({ id: "CreateEndpointKey", example: { name: "chat-frontend", expires_at: "2027-03-01T00:00:00Z" } });

export const endpointKeyJsonSchema = z
  .object({
    id: z.string(),
    endpoint_id: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: "First 12 characters of the key, to recognise it" }),
    created_by: z.string(),
    owner: z
      .object({ kind: z.enum(["user", "service_account"]), id: z.string().nullable(), name: z.string() })
      .meta({ description: "Who the key acts for: it dies with the owner's rights" }),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: "EndpointKey" });

export type CreateEndpointInput = z.output<typeof createEndpointBody>;
export type CreateEndpointKeyInput = z.output<typeof createEndpointKeyBody>;
export type ReplicaAddressInput = z.output<typeof replicaAddressBody>;
export type UpdateEndpointInput = z.output<typeof updateEndpointBody>;
export type EndpointSample = z.output<typeof endpointSampleSchema>;

const replicaJsonSchema = z.object({
  id: z.string(),
  status: z.enum(REPLICA_STATUSES),
  node_id: z.string().nullable(),
  hostname: z.string().nullable(),
  gpu_ids: z.array(z.string()),
  gpu_indexes: z.array(z.number()),
  health_reason: z.string().nullable(),
  started_at: z.string(),
  ready_at: z.string().nullable(),
  last_sample_at: z.string().nullable(),
  stopped_at: z.string().nullable(),
  stop_reason: z.string().nullable(),
});

export const endpointJsonSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    model: z.string(),
    image: z.string().nullable().meta({ description: "The serving image; null: the operator's default" }),
    gpu_type: z.string(),
    gpus_per_replica: z.number(),
    cluster_id: z.string().nullable(),
    reservation_id: z.string().nullable(),
    replicas: z.number().meta({ description: "Desired replicas (the autoscaler moves it within min/max)" }),
    min_replicas: z.number(),
    max_replicas: z.number(),
    ready_replicas: z.number(),
    gpus_held: z.number(),
    sla_p95_ms: z.number().nullable(),
    sla_availability_pct: z.number().nullable(),
    autoscale_metric: z.enum(AUTOSCALE_METRICS),
    autoscale_target: z.number().nullable(),
    cooldown_s: z.number(),
    status: z.enum(ENDPOINT_STATUSES),
    status_reason: z.string().nullable(),
    stopped: z.boolean(),
    replica_list: z.array(replicaJsonSchema).meta({ description: "Live replicas and the last stopped ones" }),
    url: z.string().meta({
      description:
        "Call the model here: `{url}/{path}` (e.g. /v1/chat/completions) with a tenant key or one of the endpoint's keys; the inference gateway balances over ready replicas",
    }),
    serving_port: z.number().meta({ description: "The port the serving container listens on" }),
    health_path: z.string().meta({ description: "What the gateway's health probes ask each replica for" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Endpoint" });

export type EndpointJson = z.infer<typeof endpointJsonSchema>;

const errorBudgetSchema = z.object({
  allowed_minutes: z.number(),
  used_minutes: z.number(),
  remaining_minutes: z.number().meta({ description: "Never below 0; see overspent_minutes" }),
  remaining_pct: z.number().nullable().meta({ description: "0–100; null while nothing is allowed yet" }),
  overspent_minutes: z.number().meta({ description: "Beyond the budget" }),
});

export const slaJsonSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    served_from: z.string().nullable().meta({
      description:
        "Where the figures start: the later of from and the first minute the endpoint was promised to serve; null: never served in the window",
    }),
    minutes_expected: z.number(),
    minutes_available: z.number(),
    minutes_idle: z.number().meta({ description: "Available minutes without serving samples while a ready replica was seen all minute" }),
    minutes_down: z.number(),
    minutes_no_data: z
      .number()
      .meta({ description: "Minutes nobody observed (the control plane was not running): left out of minutes_expected" }),
    availability_pct: z.number().nullable().meta({ description: "null until the endpoint has been ready (no data yet)" }),
    requests: z.number(),
    errors: z.number(),
    success_rate_pct: z.number().nullable(),
    minutes_with_traffic: z.number(),
    p95_compliance_pct: z.number().nullable(),
    p95_worst_ms: z.number().nullable(),
    targets: z.object({
      p95_ms: z.number().nullable(),
      availability_pct: z.number().nullable(),
      p95_objective_pct: z
        .number()
        .meta({ description: "The latency objective: the p95 target holds in at least this share of the minutes with traffic" }),
    }),
    compliant: z.object({ availability: z.boolean().nullable(), p95: z.boolean().nullable() }),
    error_budget: errorBudgetSchema
      .nullable()
      .meta({ description: "The availability objective's budget: minutes of downtime its target allows over the minutes expected" }),
    latency_budget: errorBudgetSchema.nullable().meta({
      description:
        "The latency objective's budget: minutes whose p95 may miss the target (5 % of the minutes with traffic); null without a p95 target",
    }),
  })
  .meta({ id: "EndpointSla" });

export const endpointSeriesSchema = z.object({
  step: z.string().meta({ description: "How long one point is: 1m up to ~3 hours, then 5m, 15m, 30m, 1h, 2h…" }),
  step_s: z.number(),
  from: z.string(),
  to: z.string(),
  points: z
    .array(
      z.object({
        t: z.string(),
        requests_per_s: z.number().nullable(),
        error_rate_pct: z.number().nullable(),
        p50_ms: z.number().nullable(),
        p95_ms: z.number().nullable(),
        p99_ms: z.number().nullable(),
        tokens_per_s: z.number().nullable(),
        replicas_reporting: z.number(),
      }),
    )
    .meta({ description: "Every step of the window; a step without samples has null figures (a gap)" }),
});
export type SlaJson = z.infer<typeof slaJsonSchema>;
export type SeriesJson = z.infer<typeof endpointSeriesSchema>;
