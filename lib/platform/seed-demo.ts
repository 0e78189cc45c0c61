import "server-only";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { depositFunds } from "@/lib/billing/ledger";
import { db } from "@/lib/db/client";
import { createCluster } from "@/lib/fleet/create-cluster";
import { createTenant } from "@/lib/tenants/create-tenant";
import { env } from "@/lib/env";
import { createUser } from "@/lib/users/create-user";
import { updateSettings } from "@/lib/settings/update-settings";
import { DEMO_ACCOUNTS } from "./demo-accounts";

const DEMO_TENANTS = [
  { name: "Acme AI", gpu_quota: 64, billing_email: "finance@acme.test" },
  { name: "Helix Bio", gpu_quota: 32, billing_email: "ap@helix.test" },
  // a GPU-marketplace style customer: its work is charged to a prepaid balance as it runs
  { name: "Orbital Labs", gpu_quota: 16, billing_email: null, billing_mode: "prepaid" as const },
];

/** The demo operator's bank details: obviously not an account, so the invoice page's bank transfer path is whole without Stripe. */
const DEMO_BANK = {
  account_name: "GPUForge Demo Cloud Ltd (demo)",
  iban: "GB00 DEMO 0000 0000 0000 00",
  bic: "DEMOGB00XXX",
  bank_name: "Demo Bank (no real account)",
  instructions: "Demo: no money moves. The operator records the transfer on the invoice's page once it 'arrives'.",
};

/**
 * Without Stripe, a tenant pays an invoice by bank transfer: the demo sets its operator's bank
 * details (once, on any demo database that has none) so that path ends at details, not at "ask your
 * operator" (issue 32). An operator's own details, set in Settings, are never replaced.
 */
async function seedDemoBankDetails() {
  if (await db().platformSetting.findUnique({ where: { key: "billing.bank_details" }, select: { key: true } })) return;
  await updateSettings(systemActor, { "billing.bank_details": DEMO_BANK });
}

const DEMO_CLUSTERS = [
  { name: "us-east-h100", region: "us-east-1", provider: "on-prem" },
  { name: "eu-west-a100", region: "eu-west-1", provider: "colo" },
];

/**
 * Seeds the demo: tenants, the accounts shown on the sign-in page, and clusters. Goes through
 * the same services as the API, so the invariants and the audit trail are those of real use.
 * Idempotent: does nothing when the demo operator already exists. Only in demo mode: the accounts'
 * passwords are published (README, sign-in page), so they must never reach a real database.
 */
export async function seedDemo(opts: { demoMode?: boolean } = {}): Promise<{ seeded: boolean; agentKeys: Record<string, string> }> {
  if (!(opts.demoMode ?? env().DEMO_MODE)) {
    throw new Error(
      "The demo seed creates accounts with published passwords; it runs only in demo mode (DEMO_MODE=1), e.g. for the embedded database of `npm start`.",
    );
  }
  await seedDemoBankDetails();
  const operator = DEMO_ACCOUNTS.find((a) => a.role === "operator")!;
  if (await db().user.findUnique({ where: { email: operator.email }, select: { id: true } })) {
    return { seeded: false, agentKeys: {} };
  }
  const tenantIds = new Map<string, string>();
  for (const t of DEMO_TENANTS) tenantIds.set(t.name, (await createTenant(systemActor, t)).id);
  for (const a of DEMO_ACCOUNTS) {
    await createUser(systemActor, {
      email: a.email,
      name: a.label.replace(/ \(.*\)$/, ""),
      password: a.password,
      role: a.role,
      tenant_id: a.tenant ? tenantIds.get(a.tenant) : undefined,
    });
  }
  await depositFunds(systemActor, tenantIds.get("Orbital Labs")!, 250_00, "Opening deposit (demo)");
  const agentKeys: Record<string, string> = {};
  for (const c of DEMO_CLUSTERS) {
    const cluster = await createCluster(systemActor, c);
    agentKeys[cluster.id] = (await createApiKey(systemActor, { name: `${c.name} agents`, scope: "agent", cluster_id: cluster.id })).key;
  }
  return { seeded: true, agentKeys };
}
