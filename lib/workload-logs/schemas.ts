import { z } from "zod";
import { placementRef } from "@/lib/jobs/schemas";

// Workload output as the node agent ships it: stdout and stderr of one placement (a job attempt or
// an endpoint replica) in sequenced chunks. A chunk is stored once per (placement, seq), however
// often it is re-sent; a run's log stops growing at WORKLOAD_LOG_MAX_BYTES with a marker saying so.

/** What a workload writes, and the platform's own lines about it (started, exited, truncated). */
const WORKLOAD_STREAMS = ["stdout", "stderr"] as const;
export const LOG_STREAMS = [...WORKLOAD_STREAMS, "system"] as const;

const MAX_CHUNK_CHARS = 16_384;
const MAX_CHUNKS_PER_REQUEST = 200;

const isoTime = z.iso.datetime({ offset: true, message: "Must be an ISO-8601 time" });

const logChunk = z.strictObject({
  seq: z.number().int("A whole number").min(0).max(2_147_483_647),
  stream: z.enum(WORKLOAD_STREAMS),
  // programs print NUL bytes now and then; the database's text cannot hold them: a replacement character shows where
  text: z
    .string()
    .max(MAX_CHUNK_CHARS, `At most ${MAX_CHUNK_CHARS} characters a chunk`)
    .transform((t) => t.replaceAll("\u0000", "\uFFFD")),
  at: isoTime.optional().meta({ description: "When the agent captured it (default: when it arrives)" }),
});

export const appendLogsBody = z
  .strictObject({
    ...placementRef,
    chunks: z
      .array(logChunk)
      .min(1, "At least one chunk")
      .max(MAX_CHUNKS_PER_REQUEST, `At most ${MAX_CHUNKS_PER_REQUEST} chunks a request`),
  })
  .superRefine((b, ctx) => {
    const seen = new Map<number, number>();
    b.chunks.forEach((c, i) => {
      if (seen.has(c.seq))
        ctx.addIssue({ code: "custom", path: ["chunks", i, "seq"], message: `Duplicate of chunks[${seen.get(c.seq)}].seq` });
      seen.set(c.seq, i);
    });
  })
  .meta({
    id: "AppendLogs",
    example: {
      attempt: 1,
      fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11",
      chunks: [{ seq: 0, stream: "stdout", text: "epoch 1/10 loss=2.31\n" }],
    },
  });

export const appendLogsReply = z.object({
  accepted: z
    .number()
    .meta({ description: "Chunks acknowledged (stored now, stored before, or dropped past the run's cap): do not resend them" }),
  stored: z.number(),
  truncated: z.boolean().meta({ description: "The run's log reached its cap; later output is dropped" }),
});

const logWindow = {
  after_seq: z.coerce
    .number()
    .int()
    .min(-1)
    .max(2_147_483_647)
    .optional()
    .meta({ description: "Only chunks after this seq (poll with the previous answer's next_seq)" }),
  tail: z.coerce
    .number()
    .int()
    .min(1)
    .max(500)
    .optional()
    .meta({ description: "The last N chunks (before before_seq, if given) instead of the first ones" }),
  before_seq: z.coerce
    .number()
    .int()
    .min(0)
    .max(2_147_483_647)
    .optional()
    .meta({ description: "With tail: only chunks before this seq (to read further back)" }),
  limit: z.coerce.number().int().min(1).max(500).default(200),
};

const oneWindow = (q: { after_seq?: number; tail?: number; before_seq?: number }, ctx: z.RefinementCtx) => {
  if (q.tail !== undefined && q.after_seq !== undefined)
    ctx.addIssue({
      code: "custom",
      path: ["tail"],
      message: "Either tail (the end of the log) or after_seq (onwards from a chunk), not both",
    });
  if (q.before_seq !== undefined && q.tail === undefined) ctx.addIssue({ code: "custom", path: ["before_seq"], message: "Only with tail" });
};

export const readLogsQuery = z
  .strictObject({
    attempt: z.coerce.number().int().min(1).max(1_000_000).optional().meta({ description: "Which attempt's log (default: the latest)" }),
    ...logWindow,
  })
  .superRefine(oneWindow);

export const readReplicaLogsQuery = z
  .strictObject({
    replica_id: z.uuid("Must be a replica id").optional().meta({ description: "Which replica's log (default: the newest replica)" }),
    ...logWindow,
  })
  .superRefine(oneWindow);

const logLine = z.object({ seq: z.number(), stream: z.enum(LOG_STREAMS), text: z.string(), at: z.string() });

const page = {
  data: z.array(logLine),
  next_seq: z.number().nullable().meta({ description: "Pass as after_seq to read on" }),
  has_earlier: z.boolean().meta({ description: "Chunks before the first one returned exist (read them with tail and before_seq)" }),
  truncated: z.boolean(),
};

export const jobLogsReply = z.object({
  attempt: z.number().nullable().meta({ description: "The attempt read; null when the job has not run yet" }),
  ...page,
});

export const replicaLogsReply = z.object({
  replica_id: z.string().nullable(),
  ...page,
});

export type AppendLogsInput = z.output<typeof appendLogsBody>;
export type LogChunk = z.output<typeof logChunk>;
export type ReadLogsQuery = z.output<typeof readLogsQuery>;
export type ReadReplicaLogsQuery = z.output<typeof readReplicaLogsQuery>;
