import { describe, expect, it } from "vitest";
import { balanceOf } from "@/lib/billing/ledger";
import { db } from "@/lib/db/client";
import { DEMO_ACCOUNTS } from "@/lib/platform/demo-accounts";
import { seedDemo } from "@/lib/platform/seed-demo";
import { verifyCredentials } from "@/lib/users/verify-credentials";
import { systemActor } from "@/lib/auth/principal";
import { effectiveSettings } from "@/lib/settings/settings";
import { updateSettings } from "@/lib/settings/update-settings";
import { withSettingsLock } from "../support/settings-lock";

// `npm start` seeds the demo through this; it must work on a fresh database and do nothing the second time.
describe("demo seed", () => {
  it("refuses outside demo mode: the demo's passwords are published", async () => {
    await expect(seedDemo({ demoMode: false })).rejects.toThrow(/demo mode/);
    await expect(seedDemo()).rejects.toThrow(/DEMO_MODE=1/); // this process runs without DEMO_MODE
    expect(await db().user.count({ where: { email: { in: DEMO_ACCOUNTS.map((a) => a.email) } } })).toBe(0);
  });

  it("creates the demo tenants, accounts, clusters, agent keys and the operator's bank details once", () =>
    withSettingsLock(async () => {
      const first = await seedDemo({ demoMode: true });
      expect(first.seeded).toBe(true);
      expect(Object.keys(first.agentKeys)).toHaveLength(2);
      for (const a of DEMO_ACCOUNTS) expect(await db().user.findUnique({ where: { email: a.email } })).not.toBeNull();
      const orbital = await db().tenant.findUniqueOrThrow({ where: { name: "Orbital Labs" } });
      expect(orbital.billingMode).toBe("prepaid");
      expect(await balanceOf(orbital.id)).toBe(25_000);
      expect(await seedDemo({ demoMode: true })).toEqual({ seeded: false, agentKeys: {} });
      expect(await db().tenant.count({ where: { name: "Orbital Labs" } })).toBe(1);
      // a database seeded for a demo and later served outside demo mode: the published accounts do not sign in
      const operator = DEMO_ACCOUNTS.find((a) => a.role === "operator")!;
      expect(await verifyCredentials(operator.email, operator.password, "198.18.0.99")).toEqual({ ok: false, reason: "invalid" });
      // without Stripe, invoices are paid by transfer: the demo has its operator's (plainly fake) bank details, and keeps an operator's own
      expect((await effectiveSettings()).bank).toMatchObject({
        account_name: expect.stringContaining("(demo)"),
        iban: expect.stringContaining("DEMO"),
      });
      await updateSettings(systemActor, { "billing.bank_details": { account_name: "Real Operator Ltd" } });
      await seedDemo({ demoMode: true });
      expect((await effectiveSettings()).bank).toMatchObject({ account_name: "Real Operator Ltd" });
      await updateSettings(systemActor, { "billing.bank_details": null });
    }));
});
