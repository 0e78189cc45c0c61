import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { aboutTenant } from "./operator-voice";
import { listSchedulerLogs } from "./queries";

// The scheduler page: each cycle with the work it placed or left waiting, each linked to its job's
// (or pod's) page, with the reason an operator reads (issue 32: a cycle was a row of counts that
// named nothing). A cycle logs its first decisions (lib/scheduler/run-cycle.ts); the page says how
// many it considered in all.

const decision = z.object({
  job_id: z.string(),
  outcome: z.string(),
  gpus: z.number().optional(),
  nodes: z.number().optional(),
  reason: z.string().optional(),
});

export interface CycleDecision {
  id: string;
  kind: "job" | "pod" | "unknown";
  name: string | null;
  tenant: string | null;
  outcome: "placed" | "waiting";
  what: string;
}

export async function schedulerCycles(limit: number) {
  const logs = await listSchedulerLogs(limit);
  const parsed = logs.map((l) => ({ ...l, decisions: z.array(decision).safeParse(l.decisions).data ?? [] }));
  const ids = [...new Set(parsed.flatMap((l) => l.decisions.map((d) => d.job_id)))];
  const [jobs, pods] = await Promise.all([
    db().job.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, tenant: { select: { name: true } } } }),
    db().pod.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, tenant: { select: { name: true } } } }),
  ]);
  const known = new Map<string, { kind: "job" | "pod"; name: string; tenant: string }>([
    ...jobs.map((j) => [j.id, { kind: "job" as const, name: j.name, tenant: j.tenant.name }] as const),
    ...pods.map((p) => [p.id, { kind: "pod" as const, name: p.name, tenant: p.tenant.name }] as const),
  ]);
  return parsed.map((l) => ({
    ...l,
    decisions: l.decisions.map((d): CycleDecision => {
      const k = known.get(d.job_id);
      const placed = d.outcome === "placed";
      return {
        id: d.job_id,
        kind: k?.kind ?? "unknown",
        name: k?.name ?? null,
        tenant: k?.tenant ?? null,
        outcome: placed ? "placed" : "waiting",
        what: placed
          ? `placed on ${d.gpus ?? "?"} GPU${d.gpus === 1 ? "" : "s"} of ${d.nodes ?? "?"} node${d.nodes === 1 ? "" : "s"}`
          : k
            ? aboutTenant(d.reason ?? "waiting", k.tenant)
            : (d.reason ?? "waiting"),
      };
    }),
  }));
}
