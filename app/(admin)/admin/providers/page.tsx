import Link from "next/link";
import { refreshOffersAction, setGpuMappingAction } from "@/app/_actions/providers";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { GpuMappingForm, RefreshOffersButton } from "@/components/providers/provider-forms";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { formatCents } from "@/lib/billing/money";
import { page } from "@/lib/pages/page";
import { providersPage } from "@/lib/providers/providers-page";
import { PROVIDER_LABELS } from "@/lib/providers/vocabulary";

export const metadata = { title: "Providers" };

const statusTone = {
  launching: "sky",
  booting: "sky",
  running: "green",
  terminating: "amber",
  terminated: "neutral",
  failed: "red",
} as const;

export default page(
  {
    plane: "operator",
    path: "/admin/providers",
    load: ({ principal, searchParams }) => providersPage(principal, { gpu_type: searchParams.gpu_type }),
  },
  ({ data, searchParams }) => (
    <>
      <PageHeader
        title="GPU providers"
        description={`Rented capacity for jobs that wait more than ${data.settings.wait_s} s for this fleet: offers with our price (cost + ${data.settings.default_markup_pct} % unless a provider has its own markup), what is rented now, and what it earns.`}
        actions={<AutoRefresh seconds={15} />}
      />
      <section aria-label="Providers" className="mb-6 grid gap-4 md:grid-cols-3">
        {data.providers.map((p) => (
          <Card key={p.name}>
            <div className="space-y-3 p-5">
              <div className="flex items-center justify-between">
                <h2 className="text-base font-semibold text-slate-900">{PROVIDER_LABELS[p.name]}</h2>
                {p.enabled ? (
                  p.backoff_until ? (
                    <Badge tone="amber">backed off</Badge>
                  ) : (
                    <Badge tone="green">enabled</Badge>
                  )
                ) : (
                  <Badge>no key configured</Badge>
                )}
              </div>
              <div className="grid grid-cols-2 gap-3">
                <Stat
                  label="Offers"
                  value={p.offers}
                  hint={p.offers_refreshed_at ? `refreshed ${formatRelative(p.offers_refreshed_at)}` : "never refreshed"}
                />
                <Stat label="Rented now" value={p.live_instances} />
                <Stat label="Spend today" value={formatCents(p.spend_cents_today)} hint={`cap ${formatCents(p.daily_cap_cents)} a day`} />
                <Stat label="Markup" value={`${p.markup_pct} %`} />
              </div>
              {p.last_error ? (
                <p className="rounded-md bg-red-50 px-3 py-2 text-xs text-red-700">Last refresh failed: {p.last_error}</p>
              ) : null}
              {p.backoff_until ? (
                <p className="text-xs text-amber-800">Left alone until {formatDateTime(p.backoff_until)} after failures.</p>
              ) : null}
            </div>
          </Card>
        ))}
      </section>

      <Card className="mb-6">
        <CardHeader
          title="Offers"
          description={`${data.offerCount} offers, cheapest first. Our price is cost × (1 + markup), half up to a cent; offers older than the refresh limit are never launched.`}
          actions={<RefreshOffersButton action={refreshOffersAction} />}
        />
        <nav aria-label="Filter offers by GPU type" className="flex flex-wrap gap-2 px-5 pb-3 text-sm">
          <Link
            href="/admin/providers"
            className={!searchParams.gpu_type ? "font-semibold text-indigo-700" : "text-slate-600 hover:text-indigo-700"}
          >
            All
          </Link>
          {data.gpuTypes.map((t) => (
            <Link
              key={t}
              href={`/admin/providers?gpu_type=${encodeURIComponent(t)}`}
              className={searchParams.gpu_type === t ? "font-semibold text-indigo-700" : "text-slate-600 hover:text-indigo-700"}
            >
              {t}
            </Link>
          ))}
        </nav>
        {data.offers.length === 0 ? (
          <EmptyState title="No offers cached">
            Configure a provider's key (RUNPOD_API_KEY, LAMBDA_API_KEY, VAST_API_KEY); offers refresh every few minutes.
          </EmptyState>
        ) : (
          <Table caption="Provider offers with cost, our price and margin">
            <thead className="bg-slate-50">
              <tr>
                <Th>Provider</Th>
                <Th>GPU</Th>
                <Th>Region</Th>
                <Th className="text-right">GPUs</Th>
                <Th>Kind</Th>
                <Th className="text-right">Cost / GPU-h</Th>
                <Th className="text-right">Our price</Th>
                <Th className="text-right">Margin</Th>
                <Th>Age</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {data.offers.map((o) => (
                <tr key={`${o.provider}/${o.offer_id}`}>
                  <Td>{PROVIDER_LABELS[o.provider]}</Td>
                  <Td>
                    <span className="font-medium">{o.gpu_type ?? <Badge tone="amber">unmapped</Badge>}</span>
                    <span className="block text-xs text-slate-500">{o.provider_gpu_type}</span>
                  </Td>
                  <Td className="text-xs">{o.region}</Td>
                  <Td className="text-right tabular-nums">{o.gpu_count}</Td>
                  <Td>{o.interruptible ? <Badge tone="amber">interruptible</Badge> : <Badge tone="neutral">on demand</Badge>}</Td>
                  <Td className="text-right tabular-nums">{formatCents(o.cost_cents_per_gpu_hour)}</Td>
                  <Td className="text-right font-medium tabular-nums">{formatCents(o.price_cents_per_gpu_hour)}</Td>
                  <Td className="text-right tabular-nums text-emerald-700">
                    {formatCents(o.price_cents_per_gpu_hour - o.cost_cents_per_gpu_hour)}
                  </Td>
                  <Td className="text-xs">{formatRelative(o.refreshed_at)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>

      <Card className="mb-6">
        <CardHeader
          title="Rented instances"
          description="Each joins a provider cluster as one node, runs the job it was rented for, and is terminated once idle."
        />
        {data.instances.length === 0 ? (
          <EmptyState title="Nothing rented yet">
            Jobs of tenants with burst on are placed here when they wait beyond the threshold.
          </EmptyState>
        ) : (
          <Table caption="Provider instances">
            <thead className="bg-slate-50">
              <tr>
                <Th>Instance</Th>
                <Th>Status</Th>
                <Th>Tenant</Th>
                <Th>Job</Th>
                <Th className="text-right">GPUs</Th>
                <Th className="text-right">Cost / h</Th>
                <Th className="text-right">Price / h</Th>
                <Th>Launched</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {data.instances.map((i) => (
                <tr key={i.id}>
                  <Td>
                    <span className="font-medium">{PROVIDER_LABELS[i.provider]}</span>{" "}
                    <span className="text-xs text-slate-500">{i.region}</span>
                    <span className="block font-mono text-xs text-slate-500">{i.external_id ?? "—"}</span>
                  </Td>
                  <Td>
                    <Badge tone={statusTone[i.status]}>{i.status}</Badge>
                    {i.failure ? (
                      <span className="block max-w-xs truncate text-xs text-slate-500" title={i.failure}>
                        {i.failure}
                      </span>
                    ) : null}
                  </Td>
                  <Td className="text-sm">{i.tenant_name}</Td>
                  <Td>
                    {i.job_id ? (
                      <Link className="text-indigo-700 hover:underline" href={`/admin/jobs/${i.job_id}`}>
                        {i.job_id.slice(0, 8)}
                      </Link>
                    ) : (
                      <span className="text-xs text-slate-500">
                        {i.status === "running" ? `idle since ${formatRelative(i.idle_since)}` : "—"}
                      </span>
                    )}
                  </Td>
                  <Td className="text-right tabular-nums">
                    {i.gpu_count}× {i.gpu_type}
                  </Td>
                  <Td className="text-right tabular-nums">{formatCents(i.cost_cents_per_gpu_hour * i.gpu_count)}</Td>
                  <Td className="text-right tabular-nums">{formatCents(i.price_cents_per_gpu_hour * i.gpu_count)}</Td>
                  <Td className="text-xs">{formatDateTime(i.launched_at)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>

      <div className="mb-6 grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader
            title="Margin by month"
            description="Usage on provider capacity: billed at our price, against what the provider charged for it."
          />
          {data.margins.length === 0 ? (
            <EmptyState title="No provider usage yet" />
          ) : (
            <Table caption="Revenue, cost and margin per tenant, provider and month">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Month</Th>
                  <Th>Tenant</Th>
                  <Th>Provider</Th>
                  <Th className="text-right">Revenue</Th>
                  <Th className="text-right">Cost</Th>
                  <Th className="text-right">Margin</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.margins.map((m) => (
                  <tr key={`${m.month}/${m.tenant_id}/${m.provider}`}>
                    <Td>{m.month}</Td>
                    <Td>{m.tenant_name}</Td>
                    <Td>{PROVIDER_LABELS[m.provider]}</Td>
                    <Td className="text-right tabular-nums">{formatCents(m.revenue_cents)}</Td>
                    <Td className="text-right tabular-nums">{formatCents(m.cost_cents)}</Td>
                    <Td className="text-right font-medium tabular-nums text-emerald-700">{formatCents(m.margin_cents)}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </Card>
        <Card>
          <CardHeader
            title="Tenants with burst on"
            description={`Caps on every tenant: ${formatCents(data.settings.tenant_hourly_cap_cents)} an hour, ${formatCents(data.settings.tenant_daily_cap_cents)} a day.`}
          />
          {data.burstTenants.length === 0 ? (
            <EmptyState title="No tenant has burst on">
              A tenant's admin turns it on under Billing; an operator on the tenant's page.
            </EmptyState>
          ) : (
            <ul className="divide-y divide-slate-100">
              {data.burstTenants.map((t) => (
                <li key={t.id} className="flex items-center justify-between px-5 py-3 text-sm">
                  <Link className="text-indigo-700 hover:underline" href={`/admin/tenants/${t.id}`}>
                    {t.name}
                  </Link>
                  <span className="tabular-nums text-slate-600">up to {formatCents(t.burstMaxPriceCentsPerGpuHour ?? 0)} / GPU-hour</span>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>

      <Card>
        <CardHeader
          title="GPU types"
          description="What each provider's GPU name counts as here. The built-in map reads the model from the name; your mapping wins. Empty means never use it."
        />
        {data.mappings.length === 0 ? (
          <EmptyState title="No provider GPUs seen yet" />
        ) : (
          <Table caption="Provider GPU names and our GPU types">
            <thead className="bg-slate-50">
              <tr>
                <Th>Provider</Th>
                <Th>Their name</Th>
                <Th>Source</Th>
                <Th>Ours</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {data.mappings.map((m, i) => (
                <tr key={`${m.provider}/${m.provider_gpu_type}`}>
                  <Td>{PROVIDER_LABELS[m.provider]}</Td>
                  <Td className="font-mono text-xs">{m.provider_gpu_type}</Td>
                  <Td>{m.source === "operator" ? <Badge tone="indigo">operator</Badge> : <Badge>built-in</Badge>}</Td>
                  <Td>
                    <GpuMappingForm
                      action={setGpuMappingAction}
                      provider={m.provider}
                      providerGpuType={m.provider_gpu_type}
                      gpuType={m.gpu_type}
                      idPrefix={`map${i}`}
                    />
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  ),
);
