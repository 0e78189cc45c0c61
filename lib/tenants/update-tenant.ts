import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient } from "@/lib/db/client";
import { forbidden, notFound, uniqueViolationToConflict, validationFailed } from "@/lib/errors";
import { lockPrismaTransaction } from "@/lib/db/locks";
import { run } from "@/lib/db/statement";
import { tenantSelect, type UpdateTenantInput } from "./schemas";
import { LOCK_TENANT } from "./statements";
import { resumeTenantWork, stopTenantWork } from "./tenant-work";

/**
 * Operators edit a tenant's name, quota, billing, highest allowed priority and status.
 *
 * Suspending stops the tenant's work in the same transaction, under the allocation lock the
 * scheduler and the replica reconciler take (so no cycle can place its work meanwhile): running
 * jobs are cancelled (final segment billed once), waiting jobs blocked as 'suspended', replicas
 * stopped. Reactivating queues those jobs again and lets the reconciler bring replicas back.
 * Lowering the highest allowed priority moves the tenant's waiting jobs down to it.
 *
 * Burst (issue 30) is the one setting a tenant's admin may change for its own tenant: whether its
 * waiting jobs may run on rented provider capacity, and the most it pays per GPU-hour there (burst
 * cannot be on without a cap; the database refuses it too). It turns burst on only where an
 * operator allowed it (the rentals are the operator's money first): an operator turning burst on
 * allows it, `allowed: false` withdraws the allowance and turns it off. Another tenant's id answers
 * not found.
 */
export async function updateTenant(actor: Actor, id: string, input: UpdateTenantInput) {
  const p = actor.principal;
  if (p.kind === "tenant") {
    if (p.tenantId !== id) throw notFound("Tenant");
    if (p.role !== "tenant_admin") throw forbidden("Tenant admin role required");
    const other = Object.keys(input).filter((k) => k !== "burst");
    if (other.length) throw forbidden(`Only an operator changes ${other.join(", ")}; a tenant admin changes burst only`);
    if (input.burst?.allowed !== undefined) throw forbidden("Only an operator allows burst for a tenant");
  } else if (p.kind !== "operator") {
    throw forbidden("Operator access required");
  }
  let statusChanged = false;
  try {
    const tenant = await db().$transaction(async (tx) => {
      // the allocation lock first, then the tenant's row: the order every allocator uses. Moving the
      // waiting jobs' priorities writes rows a scheduling cycle updates too, in another order: without
      // the lock the two deadlocked (seen under load in the integration suite)
      if (input.status || input.max_priority) await lockPrismaTransaction(tx, "scheduler");
      const [locked] = await run(tx, LOCK_TENANT, [id]);
      if (!locked) throw notFound("Tenant");
      const before = await tx.tenant.findUniqueOrThrow({ where: { id }, select: { ...tenantSelect } });
      const burstPrice =
        input.burst?.max_price_cents_per_gpu_hour === undefined
          ? before.burstMaxPriceCentsPerGpuHour
          : input.burst.max_price_cents_per_gpu_hour;
      const burstAllowed =
        p.kind !== "operator" || !input.burst
          ? before.burstAllowed
          : (input.burst.allowed ?? (input.burst.enabled ? true : before.burstAllowed));
      if (input.burst?.enabled && !burstAllowed) {
        if (p.kind === "operator")
          throw validationFailed([{ path: "burst.allowed", message: "Burst cannot be on for a tenant that is not allowed it" }]);
        throw forbidden("The operator has not allowed burst for this tenant");
      }
      if (input.burst?.enabled && burstPrice === null)
        throw validationFailed([
          { path: "burst.max_price_cents_per_gpu_hour", message: "Required to turn burst on: the most this tenant pays per GPU-hour" },
        ]);
      const tenant = await tx.tenant.update({
        where: { id },
        data: {
          name: input.name,
          gpuQuota: input.gpu_quota,
          status: input.status,
          billingEmail: input.billing_email === undefined ? undefined : input.billing_email,
          billingMode: input.billing_mode,
          maxPriority: input.max_priority,
          ...(input.burst ? { burstEnabled: input.burst.enabled, burstMaxPriceCentsPerGpuHour: burstPrice, burstAllowed } : {}),
          maxPods: input.limits?.max_pods,
          maxReservationHours: input.limits?.max_reservation_hours,
          maxReservations: input.limits?.max_reservations,
          // leaving prepaid forgets the exhausted state (the database requires it)
          ...(input.billing_mode === "invoice" ? { balanceExhaustedAt: null } : {}),
        },
        select: tenantSelect,
      });
      statusChanged = Boolean(input.status && input.status !== before.status);
      const work = !statusChanged
        ? {}
        : input.status === "suspended"
          ? await stopTenantWork(txClient(tx), [id], actor.principal.label)
          : await resumeTenantWork(tx, id, actor.principal.label);
      const reprioritised =
        input.max_priority && input.max_priority > before.maxPriority
          ? await tx.job.updateMany({
              where: { tenantId: id, status: { in: ["queued", "blocked"] }, priority: { lt: input.max_priority } },
              data: { priority: input.max_priority },
            })
          : { count: 0 };
      const action =
        input.burst && Object.keys(input).length === 1
          ? "tenant.burst_changed"
          : statusChanged
            ? input.status === "suspended"
              ? "tenant.suspended"
              : "tenant.reactivated"
            : "tenant.updated";
      await recordAudit(tx, actor, {
        action,
        targetType: "tenant",
        targetId: id,
        tenantId: id,
        details: {
          changes: input,
          before: {
            name: before.name,
            gpu_quota: before.gpuQuota,
            status: before.status,
            max_priority: before.maxPriority,
            burst: {
              enabled: before.burstEnabled,
              allowed: before.burstAllowed,
              max_price_cents_per_gpu_hour: before.burstMaxPriceCentsPerGpuHour,
            },
          },
          ...work,
          ...(reprioritised.count ? { jobs_reprioritised: reprioritised.count } : {}),
        },
      });
      return tenant;
    });
    if (statusChanged) {
      // freed GPUs go to others now; endpoints update their status (and, on reactivation, come back)
      await emitEvent("scheduler/run.requested", { reason: `tenant ${input.status === "suspended" ? "suspended" : "reactivated"}` });
      await emitEvent("endpoints/reconcile.requested", { reason: "tenant status changed" });
      if (input.status === "suspended") await emitEvent("platform/tenant.suspended", { tenant_id: id });
    }
    return tenant;
  } catch (e) {
    return uniqueViolationToConflict(e, "name", "A tenant with this name already exists");
  }
}
