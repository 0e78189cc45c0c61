import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { notFound, uniqueViolationToConflict } from "@/lib/errors";
import { tenantSelect, type UpdateTenantInput } from "./schemas";

/** Operators edit a tenant's name, quota, billing email and status (suspend / reactivate). */
export async function updateTenant(actor: Actor, id: string, input: UpdateTenantInput) {
  assertOperator(actor.principal);
  try {
    return await db().$transaction(async (tx) => {
      const before = await tx.tenant.findUnique({ where: { id }, select: tenantSelect });
      if (!before) throw notFound("Tenant");
      const tenant = await tx.tenant.update({
        where: { id },
        data: {
          name: input.name,
          gpuQuota: input.gpu_quota,
          status: input.status,
          billingEmail: input.billing_email === undefined ? undefined : input.billing_email,
          billingMode: input.billing_mode,
          // leaving prepaid forgets the exhausted state (the database requires it)
          ...(input.billing_mode === "invoice" ? { balanceExhaustedAt: null } : {}),
        },
        select: tenantSelect,
      });
      const action =
        input.status && input.status !== before.status
          ? input.status === "suspended"
            ? "tenant.suspended"
            : "tenant.reactivated"
          : "tenant.updated";
      await recordAudit(tx, actor, {
        action,
        targetType: "tenant",
        targetId: id,
        tenantId: id,
        details: { changes: input, before: { name: before.name, gpu_quota: before.gpuQuota, status: before.status } },
      });
      return tenant;
    });
  } catch (e) {
    return uniqueViolationToConflict(e, "name", "A tenant with this name already exists");
  }
}
