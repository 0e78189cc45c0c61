import "server-only";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { currentMonth } from "./money";
import { BILLED_BY_TENANT, RUNNING_COST } from "./statements";

// This month's money, the one definition every page and the API show (issue 32: the operator's
// card, the per-tenant rows, the tenant's own page and the invoice disagreed). It has two parts,
// always shown apart and labelled:
// - billed: the usage segments the meter has written that ended this month (UTC), whether or not an
//   invoice holds them yet, for every kind of work (jobs, replicas, pods, reserved nodes);
// - accruing: what running work has cost since its last segment and is not billed yet
//   (RUNNING_COST, computed as the meter computes a segment), which the meter bills at its next
//   tick and an invoice bills when it is generated.
// total = billed + accruing, and it is what an invoice for this month up to now would hold
// (tests/integration/month-spend.test.ts).

export interface MonthSpend {
  /** the month's first instant and the moment the figures are for */
  from: string;
  to: string;
  billed_cents: number;
  accruing_cents: number;
  total_cents: number;
  /** what what runs now costs per hour, at today's rates */
  accruing_cents_per_hour: number;
}

function spend(from: Date, to: Date, billed: number, accruing: number, perHour: number): MonthSpend {
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    billed_cents: billed,
    accruing_cents: accruing,
    total_cents: billed + accruing,
    accruing_cents_per_hour: perHour,
  };
}

/** This month so far, for every tenant (a tenant with neither part is absent) and for all of them. */
export async function monthSpendByTenant(
  now = new Date(),
  tenantId?: string,
): Promise<{ all: MonthSpend; byTenant: Map<string, MonthSpend> }> {
  const { start } = currentMonth(now);
  const [billed, running] = await Promise.all([
    run(pool(), BILLED_BY_TENANT, [start, now, tenantId ?? null]),
    run(pool(), RUNNING_COST, [tenantId ?? null, null, now]),
  ]);
  const parts = new Map<string, { billed: number; accruing: number; perHour: number }>();
  const of = (id: string) => parts.get(id) ?? parts.set(id, { billed: 0, accruing: 0, perHour: 0 }).get(id)!;
  for (const r of billed) of(r.tenant_id).billed += Number(r.c);
  for (const r of running) {
    of(r.tenant_id).accruing += Number(r.c);
    of(r.tenant_id).perHour += Number(r.per_hour);
  }
  const byTenant = new Map([...parts].map(([id, p]) => [id, spend(start, now, p.billed, p.accruing, p.perHour)]));
  const sum = (k: "billed" | "accruing" | "perHour") => [...parts.values()].reduce((s, p) => s + p[k], 0);
  return { all: spend(start, now, sum("billed"), sum("accruing"), sum("perHour")), byTenant };
}

/** One tenant's month so far (zeros when it has used nothing). */
export async function tenantMonthSpend(tenantId: string, now = new Date()): Promise<MonthSpend> {
  const { all } = await monthSpendByTenant(now, tenantId);
  return all;
}
