import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";

/** Current rate per GPU type, with its history (newest first). Visible to every signed-in caller: prices are not secret. */
export async function listRates() {
  const rows = await db().gpuRate.findMany({
    where: { effectiveFrom: { lte: new Date() } },
    orderBy: [{ gpuType: "asc" }, { effectiveFrom: "desc" }],
  });
  const byType = new Map<string, typeof rows>();
  for (const r of rows) byType.set(r.gpuType, [...(byType.get(r.gpuType) ?? []), r]);
  return [...byType.entries()].map(([gpuType, history]) => ({
    gpu_type: gpuType,
    cents_per_hour: history[0]!.centsPerHour,
    effective_from: history[0]!.effectiveFrom.toISOString(),
    created_by: history[0]!.createdBy,
    history: history.map((h) => ({
      cents_per_hour: h.centsPerHour,
      effective_from: h.effectiveFrom.toISOString(),
      created_by: h.createdBy,
    })),
  }));
}

/** A new rate from now on; usage that already ran keeps the rate in force when it ran. */
export async function setRate(actor: Actor, gpuType: string, centsPerHour: number) {
  assertOperator(actor.principal);
  await db().$transaction(async (tx) => {
    const before = await tx.gpuRate.findFirst({ where: { gpuType }, orderBy: { effectiveFrom: "desc" } });
    await tx.gpuRate.create({ data: { gpuType, centsPerHour, createdBy: actor.principal.label } });
    await recordAudit(tx, actor, {
      action: "billing.rate_set",
      targetType: "gpu_rate",
      targetId: gpuType,
      details: { gpu_type: gpuType, cents_per_hour: centsPerHour, before: before?.centsPerHour ?? null },
    });
  });
  return (await listRates()).find((r) => r.gpu_type === gpuType)!;
}
