import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import { jobSlurmReply, reportSlurmClusterBody, reportSlurmJobBody, reportSlurmJobReply, slurmClusterJson } from "@/lib/slurm/schemas";
import { authErrors, idParams, notFoundError } from "./common";

// The Slurm bridge's own operations (the rest of its protocol is the node agent's: registration,
// heartbeats, exits and logs), and the Slurm side of clusters and jobs for the console and scripts.

const slurmClusterReply = z.object({ slurm: slurmClusterJson });

export const reportSlurmCluster = defineContract({
  operationId: "reportSlurmCluster",
  method: "PUT",
  path: "/api/clusters/{id}/slurm",
  summary: "A Slurm bridge reports its cluster's Slurm picture (name, version, partitions) and renews its claim to run it",
  description:
    "The cluster's own agent key (not a node-bound one) or an operator. One bridge is active per cluster: another is refused with 409 until the active one has been silent for the node lease (NODE_OFFLINE_AFTER_S), then takes over.",
  tags: ["Slurm"],
  access: ["operator", "agent"],
  params: idParams,
  body: reportSlurmClusterBody,
  bodyLimitBytes: 512 * 1024,
  rateLimitPerMinute: 600,
  responses: {
    200: { description: "Recorded", schema: slurmClusterReply },
    ...authErrors,
    ...notFoundError,
    409: { description: "Not a Slurm cluster, or another bridge is the cluster's active one", schema: errorBodySchema },
  },
});

export const getSlurmCluster = defineContract({
  operationId: "getSlurmCluster",
  method: "GET",
  path: "/api/clusters/{id}/slurm",
  summary: "A Slurm cluster's Slurm picture as its bridge last reported it",
  tags: ["Slurm"],
  access: ["operator", "agent"],
  params: idParams,
  responses: { 200: { description: "The Slurm side of the cluster", schema: slurmClusterReply }, ...authErrors, ...notFoundError },
});

export const reportSlurmJob = defineContract({
  operationId: "reportSlurmJob",
  method: "POST",
  path: "/api/jobs/{id}/slurm",
  summary: "A Slurm bridge reports on a placement's Slurm job (fenced): its id, state, start and end",
  description:
    "Fenced like exit reports: a report about a placement that is not the job's current one answers 409 stale_report and changes nothing. The run is billed from Slurm's start, and ends where Slurm says it ended. The reply says what the placement is, for the submission.",
  tags: ["Slurm"],
  access: ["operator", "agent"],
  params: idParams,
  body: reportSlurmJobBody,
  rateLimitPerMinute: 60_000,
  responses: {
    200: { description: "Recorded", schema: reportSlurmJobReply },
    ...authErrors,
    ...notFoundError,
    409: {
      description: "stale_report: not the job's current placement; conflict: not on a Slurm cluster, or about another Slurm job",
      schema: errorBodySchema,
    },
  },
});

export const getJobSlurm = defineContract({
  operationId: "getJobSlurm",
  method: "GET",
  path: "/api/jobs/{id}/slurm",
  summary: "A job's Slurm jobs, attempt by attempt, with the states Slurm reported",
  tags: ["Slurm"],
  access: ["operator", "tenant", "agent"],
  params: idParams,
  responses: { 200: { description: "The job's Slurm side", schema: jobSlurmReply }, ...authErrors, ...notFoundError },
});
