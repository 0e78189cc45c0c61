import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { uniqueViolationToConflict } from "@/lib/errors";
import { tenantSelect, type CreateTenantInput } from "./schemas";

export async function createTenant(actor: Actor, input: CreateTenantInput) {
  assertOperator(actor.principal);
  try {
    return await db().$transaction(async (tx) => {
      const tenant = await tx.tenant.create({
        data: {
          name: input.name,
          gpuQuota: input.gpu_quota,
          billingEmail: input.billing_email ?? null,
          billingMode: input.billing_mode ?? "invoice",
          maxPriority: input.max_priority ?? 1,
        },
        select: tenantSelect,
      });
      await recordAudit(tx, actor, {
        action: "tenant.created",
        targetType: "tenant",
        targetId: tenant.id,
        tenantId: tenant.id,
        details: { name: tenant.name, gpu_quota: tenant.gpuQuota },
      });
      return tenant;
    });
  } catch (e) {
    return uniqueViolationToConflict(e, "name", "A tenant with this name already exists");
  }
}
