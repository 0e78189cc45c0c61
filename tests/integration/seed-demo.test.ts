import { describe, expect, it } from "vitest";
import { balanceOf } from "@/lib/billing/ledger";
import { db } from "@/lib/db/client";
import { DEMO_ACCOUNTS } from "@/lib/platform/demo-accounts";
import { seedDemo } from "@/lib/platform/seed-demo";

// `npm start` seeds the demo through this; it must work on a fresh database and do nothing the second time.
describe("demo seed", () => {
  it("creates the demo tenants, accounts, clusters and agent keys once", async () => {
    const first = await seedDemo();
    expect(first.seeded).toBe(true);
    expect(Object.keys(first.agentKeys)).toHaveLength(2);
    for (const a of DEMO_ACCOUNTS) expect(await db().user.findUnique({ where: { email: a.email } })).not.toBeNull();
    const orbital = await db().tenant.findUniqueOrThrow({ where: { name: "Orbital Labs" } });
    expect(orbital.billingMode).toBe("prepaid");
    expect(await balanceOf(orbital.id)).toBe(25_000);
    expect(await seedDemo()).toEqual({ seeded: false, agentKeys: {} });
    expect(await db().tenant.count({ where: { name: "Orbital Labs" } })).toBe(1);
  });
});
