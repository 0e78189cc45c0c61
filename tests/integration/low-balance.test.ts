import { describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { depositFunds } from "@/lib/billing/ledger";
import { warnLowBalances } from "@/lib/billing/low-balance";
import { accrueRunningUsage } from "@/lib/billing/meter";
import { db } from "@/lib/db/client";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createTenant } from "@/lib/tenants/create-tenant";
import { actorFor, availableFleet, makeUser, tenantAdminPrincipal, unique } from "../support/fixtures";

// Low-balance warnings go to a prepaid tenant's admins and billing contact once per episode: when
// what is left covers less than a day of the current spend (or nothing), and again only after a
// deposit brought it back to a comfortable level.

describe("low-balance warnings", () => {
  it("mail the tenant once when its balance runs low, and again after funds ended the episode", async () => {
    const fleet = await availableFleet(1, 2, "LB");
    await db().gpuRate.create({
      data: { gpuType: fleet.gpuType, centsPerHour: 3600, effectiveFrom: new Date("2020-01-01"), createdBy: "test" },
    });
    const tenant = await createTenant(systemActor, {
      name: unique("low"),
      gpu_quota: 4,
      billing_email: `${unique("billing")}@example.test`,
      billing_mode: "prepaid",
    });
    const admin = await makeUser("tenant_admin", tenant.id);
    await depositFunds(systemActor, tenant.id, 5_000);
    const job = await submitJob(actorFor(tenantAdminPrincipal(tenant.id)), {
      name: unique("spender"),
      gpu_count: 1,
      gpu_type: fleet.gpuType,
      priority: 5,
      max_retries: 0,
    });
    for (let i = 0; i < 20 && (await db().job.findUniqueOrThrow({ where: { id: job.id } })).status !== "running"; i++)
      await runSchedulerCycle("test");
    await new Promise((r) => setTimeout(r, 1200));
    await accrueRunningUsage({ tenantId: tenant.id, prepaidEveryS: 0 });

    // $50 at $36 an hour is under a day of spend: low
    const warned = async () => db().notification.findMany({ where: { tenantId: tenant.id, mailKind: "low_balance" } });
    await warnLowBalances();
    const first = await warned();
    expect(new Set(first.map((n) => n.target))).toEqual(new Set([admin.email, tenant.billingEmail]));
    expect(first[0]!.body).toContain("Your balance is");
    expect(first[0]!.body).toContain("at the current spend");
    await Promise.all([warnLowBalances(), warnLowBalances()]);
    expect(await warned()).toHaveLength(2); // once per episode, however many sweeps (and instances)

    await depositFunds(systemActor, tenant.id, 10_000_000);
    await warnLowBalances();
    expect((await db().tenant.findUniqueOrThrow({ where: { id: tenant.id } })).lowBalanceWarnedAt).toBeNull();
    // spending it down again (a direct debit of all but a dollar) starts a new episode
    await db().ledgerEntry.create({
      data: {
        tenantId: tenant.id,
        kind: "card_refund",
        amountCents: BigInt(-10_000_000),
        cardDepositId: await depositRow(tenant.id),
        description: "test",
        createdBy: "test",
      },
    });
    await warnLowBalances();
    expect(await warned()).toHaveLength(4);
  });
});

async function depositRow(tenantId: string) {
  const d = await db().cardDeposit.create({
    data: {
      tenantId,
      amountCents: 10_000_000n,
      currency: "usd",
      createdBy: "test",
      status: "paid",
      paidAt: new Date(),
      refundedCents: 10_000_000n,
    },
  });
  return d.id;
}
