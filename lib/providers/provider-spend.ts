import "server-only";
import type { OperatorPrincipal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { listProviders, marginsByMonth } from "./queries";
import { PROVIDER_SPEND_SINCE } from "./statements";
import type { ProviderName } from "./vocabulary";

export interface ProviderSpendRow {
  provider: ProviderName;
  enabled: boolean;
  todayCents: number;
  monthCostCents: number;
  monthRevenueCents: number;
  monthMarginCents: number;
}

/**
 * Provider spend for the billing page: what each provider's instances cost us today and this
 * month (rental time, idle and boot included), and this month's revenue from usage on them (our
 * price), so the margin shown is after the time no job paid for.
 */
export async function providerSpend(p: OperatorPrincipal): Promise<ProviderSpendRow[]> {
  const now = new Date();
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const [providers, month, margins] = await Promise.all([
    listProviders(p),
    run(pool(), PROVIDER_SPEND_SINCE, [monthStart]),
    marginsByMonth(p, monthStart),
  ]);
  return providers.map((x) => {
    const cost = Number(month.find((m) => m.provider === x.name)?.cost_cents ?? 0);
    const revenue = margins.filter((m) => m.provider === x.name).reduce((s, m) => s + m.revenue_cents, 0);
    return {
      provider: x.name,
      enabled: x.enabled,
      todayCents: x.spend_cents_today,
      monthCostCents: cost,
      monthRevenueCents: revenue,
      monthMarginCents: revenue - cost,
    };
  });
}
