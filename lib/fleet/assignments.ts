import { z } from "zod";
import { slurmHeartbeatReply } from "@/lib/slurm/schemas";
import { handoverInstructionSchema } from "@/lib/handover/schemas";
import { nodeJsonSchema } from "./node-schemas";

// What a heartbeat tells a node to run: the one definition the control plane answers with, the
// OpenAPI document publishes and the node agent reads (it imports these types). Every entry is one
// placement: `attempt` and `fence` name it, and every report the agent makes about it (exit, logs,
// health) must carry them back; anything about an older placement is refused as stale.

/** The placement's access secret (lib/fleet/workload-access.ts): what the gateway must send for the agent to forward a request. */
const accessSecret = z.string().meta({
  description:
    "The secret the inference gateway sends (x-gpuforge-access) with every request for this placement's ports; the agent's access guard forwards nothing without it. Never given to the container",
});

const placement = {
  attempt: z.number().int().min(1).meta({ description: "Which placement of the work this is (a job's attempt; 1 for a replica)" }),
  fence: z.string().meta({ description: "Opaque token of this placement, new for every placement; reports about it must carry it" }),
  gpu_ids: z.array(z.string()),
  logs_path: z.string().meta({ description: "Where the agent posts this placement's stdout/stderr chunks" }),
};

const jobAssignmentSchema = z.object({
  kind: z.literal("job"),
  job_id: z.string(),
  ...placement,
  image: z
    .string()
    .optional()
    .meta({ description: "The container image to run; absent only for work that runs nothing (it holds its GPUs for duration_s)" }),
  command: z.string().optional().meta({ description: "Run as `sh -c` inside the image" }),
  duration_s: z.number().optional(),
  env: z
    .record(z.string(), z.string())
    .optional()
    .meta({ description: "The job's own environment variables (a pipeline step's, resolved)" }),
  outputs_path: z.string().meta({ description: "Where this placement's outputs are posted (POST, {outputs: {...}})" }),
  report_token: z.string().meta({
    description:
      "A credential scoped to this placement: it may post this placement's outputs and nothing else. Given to the job's container (GPUFORGE_REPORT_TOKEN) instead of the agent key",
  }),
});

const replicaAssignmentSchema = z.object({
  kind: z.literal("endpoint_replica"),
  replica_id: z.string(),
  endpoint_id: z.string(),
  endpoint_name: z.string(),
  model: z.string(),
  ...placement,
  image: z.string().optional().meta({ description: "The serving image; absent: the operator's default serving image on the node" }),
  metrics_path: z.string().meta({ description: "Where the serving side (or the agent) posts this replica's samples" }),
  serving_port: z.number().int().meta({
    description:
      "The port the serving container listens on; the container publishes nothing: the agent's access guard listens on a host port of its choosing and forwards the gateway's requests (those with access_secret) to this port",
  }),
  address_path: z.string().meta({
    description:
      "Where the agent reports the host port its access guard listens on for serving_port (fenced); the inference gateway connects there",
  }),
  access_secret: accessSecret,
  report_token: z.string().meta({
    description:
      "A credential scoped to this replica's placement: it may post this replica's samples and nothing else. Given to the serving container instead of the agent key",
  }),
});

const podAssignmentSchema = z.object({
  kind: z.literal("pod"),
  pod_id: z.string(),
  pod_name: z.string(),
  ...placement,
  image: z.string().meta({ description: "The pod's image; its own entrypoint runs, for as long as the pod does" }),
  ports: z.array(z.number().int()).meta({
    description:
      "Container ports the pod serves (22 included when the pod has an SSH key). 22 is published on a host port for SSH, which the tenant's key guards; every other port is reached only through the inference gateway: the agent's access guard listens on its host port and forwards requests carrying access_secret",
  }),
  access_secret: accessSecret,
  ssh_public_key: z
    .string()
    .optional()
    .meta({ description: "One OpenSSH public key line, for root's authorized_keys (and PUBLIC_KEY in the environment)" }),
  status_path: z
    .string()
    .meta({ description: "Where the agent reports the container running (with its host ports), exited, or stopped (fenced)" }),
});

const assignmentSchema = z.discriminatedUnion("kind", [jobAssignmentSchema, replicaAssignmentSchema, podAssignmentSchema]);

export type JobAssignment = z.infer<typeof jobAssignmentSchema>;
export type ReplicaAssignment = z.infer<typeof replicaAssignmentSchema>;
export type PodAssignment = z.infer<typeof podAssignmentSchema>;
export type Assignment = z.infer<typeof assignmentSchema>;

/** The heartbeat's answer: the node as the control plane holds it, what it should run, and its lease. */
export const heartbeatReplySchema = z.object({
  node: nodeJsonSchema,
  assignments: z
    .array(assignmentSchema)
    .meta({ description: "Jobs to run and endpoint replicas to serve, one entry per placement; anything else the node runs it must stop" }),
  lease_s: z.number().meta({
    description:
      "The node's lease: an agent that cannot heartbeat for this long must stop its work (the control plane moves it elsewhere by then)",
  }),
  slurm: slurmHeartbeatReply.optional().meta({ description: "A Slurm node's bridge: whether GPUForge wants it drained in Slurm" }),
  handover: handoverInstructionSchema.optional(),
});

export type HeartbeatReply = z.output<typeof heartbeatReplySchema>;
