import { z } from "zod";
import { paginationQuery } from "@/lib/http/pagination";
import { imageField, placementRef } from "@/lib/jobs/schemas";
import { POD_STATUSES } from "./pod-lifecycle";
import { parseSshPublicKey } from "./ssh-key";

// Pods as the API takes and shows them (API.md, "Workload access").

const MAX_POD_PORTS = 16;
const port = z.number({ error: "A port number" }).int("A whole port number").min(1, "Ports are 1–65535").max(65_535, "Ports are 1–65535");

const podPortsField = z
  .array(port)
  .max(MAX_POD_PORTS, `At most ${MAX_POD_PORTS} ports`)
  .superRefine((ports, ctx) => {
    const seen = new Map<number, number>();
    ports.forEach((p, i) => {
      if (seen.has(p)) ctx.addIssue({ code: "custom", path: [i], message: `Duplicate of ports[${seen.get(p)}]` });
      seen.set(p, i);
    });
  });

const sshPublicKeyField = z
  .string()
  .max(16_384, "At most 16,384 characters")
  .transform((v, ctx) => {
    const check = parseSshPublicKey(v);
    if (!check.ok) {
      ctx.addIssue({ code: "custom", message: check.reason });
      return z.NEVER;
    }
    return check.key;
  });

const podName = z
  .string()
  .trim()
  .min(1, "Name is required")
  .max(100, "At most 100 characters")
  .regex(/^[a-z0-9][a-z0-9-]*$/, "Lower-case letters, digits and dashes, starting with a letter or digit");

export const createPodBody = z
  .strictObject({
    tenant_id: z.uuid("Must be a tenant id").optional().meta({ description: "Operators: the tenant the pod belongs to" }),
    name: podName,
    gpu_type: z
      .string()
      .trim()
      .min(1)
      .max(32)
      .regex(/^[A-Za-z0-9._-]+$/, "Letters, digits, dot, dash, underscore"),
    gpu_count: z
      .number({ error: "A whole number of GPUs" })
      .int("A whole number of GPUs")
      .min(1, "At least 1 GPU")
      .max(64, "A pod runs on one node: at most 64 GPUs"),
    image: imageField,
    ports: podPortsField.default([]).meta({
      description:
        "Container ports the pod serves (Jupyter's 8888, say), reached through the inference gateway (each port's url) or an SSH tunnel; 22 is added, and published for your key, when an SSH key is given",
    }),
    ssh_public_key: sshPublicKeyField
      .optional()
      .meta({ description: "One OpenSSH public key line; installed as root's authorized key and exposed as PUBLIC_KEY" }),
    cluster_id: z.uuid("Must be a cluster id").optional(),
    restart_on_failure: z
      .boolean()
      .default(false)
      .meta({ description: "Place the pod again (elsewhere) when its node fails; otherwise it is marked failed and you are alerted" }),
  })
  .meta({
    id: "CreatePod",
    example: {
      name: "notebook",
      gpu_type: "H100",
      gpu_count: 1,
      image: "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
      ports: [8888],
      ssh_public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG8q… me@laptop",
    },
  });

export const listPodsQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(POD_STATUSES).optional(),
  tenant_id: z.uuid().optional(),
});

const podPortMapping = z.object({
  container_port: z.number(),
  host_port: z.number().nullable().meta({ description: "null until the pod runs" }),
  access: z.enum(["ssh", "gateway"]).meta({
    description:
      "ssh: the pod's SSH port, published on the node for your key; gateway: reached only through the inference gateway (url, with a key of the pod's tenant) or an SSH tunnel — nothing else on the node's network can reach it",
  }),
  url: z.string().nullable().meta({ description: "With access gateway, while the pod runs: where to call the port" }),
});

/** What the node's agent reports about a pod's container, fenced like every agent report. */
export const reportPodStatusBody = z
  .strictObject({
    ...placementRef,
    status: z.enum(["running", "exited", "stopped"]).meta({
      description:
        "running: the container is up with its ports published; exited: it ended on its own (or could not start); stopped: the agent stopped it as asked",
    }),
    ports: z
      .array(z.strictObject({ container_port: port, host_port: port }))
      .max(MAX_POD_PORTS + 1)
      .optional()
      .meta({ description: "With running: the host port published for each of the pod's container ports" }),
    exit_code: z.number().int().min(-1_000_000).max(1_000_000).optional(),
    error: z.string().max(2_000).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.status === "running" && !b.ports)
      ctx.addIssue({
        code: "custom",
        path: ["ports"],
        message: "Required with status running (an empty list when the pod publishes none)",
      });
    if (b.status !== "running" && b.ports) ctx.addIssue({ code: "custom", path: ["ports"], message: "Only with status running" });
  })
  .meta({
    id: "ReportPodStatus",
    example: {
      attempt: 1,
      fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11",
      status: "running",
      ports: [
        { container_port: 22, host_port: 40022 },
        { container_port: 8888, host_port: 40888 },
      ],
    },
  });

export const podJsonSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    status: z.enum(POD_STATUSES),
    status_reason: z.string().nullable(),
    pending_reason: z.string().nullable().meta({ description: "Why a pending pod is not placed yet" }),
    gpu_type: z.string(),
    gpu_count: z.number(),
    cluster_id: z.string().nullable(),
    image: z.string(),
    restart_on_failure: z.boolean(),
    ssh_key_fingerprint: z.string().nullable(),
    attempt: z.number().meta({ description: "How many times it was placed; the current placement while it runs" }),
    host: z.string().nullable().meta({ description: "The node's address, while the pod runs" }),
    hostname: z.string().nullable(),
    gpu_ids: z.array(z.string()),
    ports: z.array(podPortMapping),
    ssh_command: z.string().nullable().meta({ description: "With an SSH key, while it runs" }),
    running_since: z.string().nullable(),
    cost_cents: z.number().meta({ description: "Billed so far, every run of it, plus the running segment not billed yet" }),
    created_at: z.string(),
    updated_at: z.string(),
    terminated_at: z.string().nullable(),
  })
  .meta({ id: "Pod" });

export const podEventsReply = z.object({
  data: z.array(
    z.object({ from_status: z.string().nullable(), to_status: z.string(), reason: z.string(), actor: z.string(), created_at: z.string() }),
  ),
});

export type CreatePodInput = z.output<typeof createPodBody>;
export type ReportPodStatusInput = z.output<typeof reportPodStatusBody>;
export type PodJson = z.infer<typeof podJsonSchema>;
