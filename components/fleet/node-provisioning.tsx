import { Badge, type Tone } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { BmcForm, PowerButtons, ProvisionForm, RemoveBmcButton } from "@/components/forms/bmc-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import type { NodeProvisioningSection } from "@/lib/provisioning/node-section";
import type { ExchangeJson, ProvisioningJson, ProvisioningStepJson } from "@/lib/provisioning/schemas";

// The node page's "BMC and provisioning" section: the node's BMC (never its password), power, a
// provisioning's start, and the latest provisioning's steps, each with every Redfish request it
// made, the BMC's answer and its timing. Operators only (the node page is the operator plane's).

const STEP_TONES: Record<ProvisioningStepJson["status"], Tone> = {
  pending: "neutral",
  running: "sky",
  succeeded: "green",
  failed: "red",
  skipped: "neutral",
};
const RUN_TONES: Record<ProvisioningJson["status"], Tone> = { running: "sky", succeeded: "green", failed: "red", cancelled: "amber" };
const DOT: Record<ProvisioningStepJson["status"], string> = {
  pending: "bg-white ring-slate-300",
  running: "bg-sky-500 ring-sky-200 animate-pulse",
  succeeded: "bg-emerald-500 ring-emerald-100",
  failed: "bg-red-500 ring-red-100",
  skipped: "bg-slate-300 ring-slate-100",
};

function duration(ms: number | null): string {
  if (ms === null) return "";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

const time = (iso: string) => iso.slice(11, 23);

function statusTone(status: number | null): Tone {
  if (status === null) return "red";
  if (status < 300) return "green";
  if (status === 401 || status === 403 || status >= 500) return "red";
  return "amber";
}

function Exchanges({ step }: { step: ProvisioningStepJson }) {
  return (
    <details className="mt-2 text-xs">
      <summary className="cursor-pointer rounded text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-indigo-600">
        {step.exchanges.length + step.exchanges_omitted} Redfish request{step.exchanges.length + step.exchanges_omitted === 1 ? "" : "s"}
        {step.exchanges_omitted ? ` (${step.exchanges_omitted} in the middle not kept)` : ""}
      </summary>
      <div className="mt-2 rounded-md ring-1 ring-slate-200">
        <Table caption={`Redfish requests of “${step.label}”`}>
          <thead className="bg-slate-50">
            <tr>
              <Th>At (UTC)</Th>
              <Th>Request</Th>
              <Th>Answer</Th>
              <Th className="text-right">Time</Th>
              <Th>Why repeated</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {step.exchanges.map((e: ExchangeJson, i) => (
              <tr key={`${e.at}-${i}`} className="align-top">
                <Td className="whitespace-nowrap font-mono text-xs text-slate-500">{time(e.at)}</Td>
                <Td wrap className="min-w-72 max-w-md">
                  <span className="break-all font-mono text-xs">
                    <span className="font-semibold">{e.method}</span> {e.path}
                  </span>
                  {e.request || e.response ? (
                    <details className="mt-1">
                      <summary className="cursor-pointer text-slate-500 hover:text-slate-700">Bodies</summary>
                      {e.request ? (
                        <pre className="mt-1 max-h-40 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-2 text-[11px] text-slate-700">
                          {e.request}
                        </pre>
                      ) : null}
                      {e.response ? (
                        <pre className="mt-1 max-h-40 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-900 p-2 text-[11px] text-slate-100">
                          {e.response}
                        </pre>
                      ) : null}
                    </details>
                  ) : null}
                </Td>
                <Td className="whitespace-nowrap">
                  <Badge tone={statusTone(e.status)}>{e.status ?? "no answer"}</Badge>
                  {e.error ? <p className="mt-1 max-w-xs text-red-700">{e.error}</p> : null}
                </Td>
                <Td className="text-right tabular-nums">{e.duration_ms} ms</Td>
                <Td className="max-w-xs text-slate-600">
                  {e.quirk ? <span title={e.quirk_reason}>{e.quirk.replaceAll("_", " ")}</span> : ""}
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
      </div>
    </details>
  );
}

function Timeline({ p }: { p: ProvisioningJson }) {
  return (
    <ol className="relative ml-2 border-l border-slate-200" aria-label="Provisioning steps">
      {p.steps.map((s) => (
        <li key={s.name} className="mb-5 ml-5" data-step={s.name} data-status={s.status}>
          <span aria-hidden className={`absolute -left-[7px] mt-1 h-3.5 w-3.5 rounded-full ring-4 ${DOT[s.status]}`} />
          <div className="flex flex-wrap items-center gap-2">
            <p className="text-sm font-medium text-slate-900">{s.label}</p>
            <Badge tone={STEP_TONES[s.status]}>{s.status}</Badge>
            {s.duration_ms !== null ? <span className="text-xs tabular-nums text-slate-500">{duration(s.duration_ms)}</span> : null}
            {s.attempts > 1 ? <span className="text-xs text-slate-500">{s.attempts} visits</span> : null}
            {s.lease_token ? <span className="text-xs text-slate-500">lease token {s.lease_token}</span> : null}
          </div>
          {s.message && s.message !== s.label ? (
            <p className={`mt-0.5 text-sm ${s.status === "failed" ? "text-red-700" : "text-slate-600"}`}>{s.message}</p>
          ) : null}
          {s.exchanges.length ? <Exchanges step={s} /> : null}
        </li>
      ))}
    </ol>
  );
}

function BmcSummary({ bmc }: { bmc: NonNullable<NodeProvisioningSection["bmc"]> }) {
  const d = bmc.discovered;
  const rows: Array<[string, React.ReactNode]> = [
    [
      "Address",
      <span key="u" className="font-mono text-xs">
        {bmc.url}
      </span>,
    ],
    ["Login", bmc.username],
    [
      "Certificate",
      bmc.url.startsWith("http://") ? (
        <Badge key="t" tone="amber">
          plain http: not encrypted
        </Badge>
      ) : bmc.verify_tls ? (
        <Badge key="t" tone="green">
          verified{bmc.ca_pem_set ? " against its CA" : ""}
        </Badge>
      ) : (
        <Badge key="t" tone="amber">
          not verified
        </Badge>
      ),
    ],
    [
      "Password",
      bmc.password_readable ? (
        "stored encrypted"
      ) : (
        <Badge key="p" tone="red">
          unreadable here: store it again
        </Badge>
      ),
    ],
    [
      "Last contact",
      bmc.last_contact_at ? (
        <time key="c" dateTime={bmc.last_contact_at}>
          {formatRelative(bmc.last_contact_at)}
        </time>
      ) : (
        "never"
      ),
    ],
  ];
  if (d?.system)
    rows.push([
      "System",
      <span key="s" className="font-mono text-xs">
        {d.system}
      </span>,
    ]);
  if (d?.manufacturer) rows.push(["Hardware", [d.manufacturer, d.model].filter(Boolean).join(" ")]);
  if (d?.virtual_media)
    rows.push([
      "Virtual CD",
      <span key="m" className="font-mono text-xs">{`${d.virtual_media} (on the ${d.virtual_media_on ?? "?"})`}</span>,
    ]);
  if (d?.power_state) rows.push(["Power", d.power_state]);
  if (d?.auth) rows.push(["Sign-in", d.auth === "session" ? "Redfish session" : "basic auth (no working sessions)"]);
  return (
    <div>
      <dl className="grid grid-cols-[8rem_1fr] gap-x-4 gap-y-1.5 text-sm">
        {rows.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="text-slate-500">{k}</dt>
            <dd className="text-slate-900">{v}</dd>
          </div>
        ))}
      </dl>
      {bmc.last_error ? (
        <p role="status" className="mt-3 rounded-md bg-red-50 px-3 py-2 text-sm text-red-700">
          <span className="font-medium">{bmc.last_error.kind.replaceAll("_", " ")}</span> ({formatRelative(bmc.last_error.at)}):{" "}
          {bmc.last_error.message}
        </p>
      ) : null}
    </div>
  );
}

export function NodeProvisioning({
  nodeId,
  hostname,
  section,
  actions,
}: {
  nodeId: string;
  hostname: string;
  section: NodeProvisioningSection;
  actions: { save: FormAction; remove: FormAction; power: FormAction; provision: FormAction };
}) {
  const { bmc, provisionings } = section;
  const [latest, ...earlier] = provisionings;
  return (
    <Card className="mt-6" id="provisioning" aria-labelledby="provisioning-title">
      <CardHeader
        title="BMC and provisioning"
        description="Power and provision this node through its BMC over Redfish. Only operators see this: tenants never see a BMC or its answers."
        actions={bmc ? <RemoveBmcButton action={actions.remove} nodeId={nodeId} /> : null}
      />
      <div className="grid gap-8 p-5 lg:grid-cols-2">
        <div>
          <h3 id="provisioning-title" className="mb-3 text-sm font-semibold text-slate-900">
            BMC
          </h3>
          {bmc ? <BmcSummary bmc={bmc} /> : <p className="text-sm text-slate-600">No BMC stored for this node yet.</p>}
          <details className="mt-4" open={!bmc}>
            <summary className="cursor-pointer text-sm font-medium text-indigo-700 hover:underline">
              {bmc ? "Replace the BMC…" : "Store the BMC"}
            </summary>
            <div className="mt-3">
              <BmcForm
                action={actions.save}
                nodeId={nodeId}
                current={bmc ? { url: bmc.url, username: bmc.username, verify_tls: bmc.verify_tls, system_id: bmc.system_id } : null}
                canStore={section.encryption}
              />
            </div>
          </details>
        </div>
        <div className="flex flex-col gap-6">
          <div>
            <h3 className="mb-3 text-sm font-semibold text-slate-900">Power</h3>
            <PowerButtons action={actions.power} nodeId={nodeId} hostname={hostname} blocked={section.powerBlocked} />
          </div>
          <div>
            <h3 className="mb-3 text-sm font-semibold text-slate-900">Provision from an image</h3>
            <ProvisionForm action={actions.provision} nodeId={nodeId} blocked={section.provisionBlocked} />
          </div>
        </div>
      </div>
      <div className="border-t border-slate-100 p-5" data-testid="provisioning-latest">
        {latest ? (
          <>
            <div className="mb-4 flex flex-wrap items-center gap-3">
              <h3 className="text-sm font-semibold text-slate-900">Latest provisioning</h3>
              <Badge tone={latest.phase === "inspection" ? "indigo" : RUN_TONES[latest.status]}>
                {latest.phase === "inspection" ? "inspecting" : latest.status}
              </Badge>
              <span className="font-mono text-xs text-slate-600">{latest.image_url}</span>
              <span className="text-xs text-slate-500">
                started {formatDateTime(latest.started_at)} by {latest.requested_by}
                {latest.finished_at ? ` · ended ${formatRelative(latest.finished_at)}` : ""}
              </span>
            </div>
            {latest.phase === "inspection" ? (
              <p className="mb-4 rounded-md bg-indigo-50 px-3 py-2 text-sm text-indigo-800">
                Booted {latest.image_url} and the agent is back: the node is being inspected (attestation) before it goes back into service.
              </p>
            ) : null}
            {latest.outcome ? (
              <p
                className={`mb-4 rounded-md px-3 py-2 text-sm ${latest.status === "succeeded" ? "bg-emerald-50 text-emerald-800" : latest.status === "running" ? "bg-sky-50 text-sky-800" : "bg-red-50 text-red-700"}`}
              >
                {latest.outcome}
              </p>
            ) : null}
            <Timeline p={latest} />
          </>
        ) : (
          <EmptyState title="Never provisioned">
            Store the BMC, take the node out of service (maintenance), then provision it from an image.
          </EmptyState>
        )}
        {earlier.length ? (
          <div className="mt-2">
            <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-500">Earlier</h3>
            <ul className="divide-y divide-slate-100 text-sm">
              {earlier.map((p) => (
                <li key={p.id} className="flex flex-wrap items-center gap-3 py-2">
                  <Badge tone={RUN_TONES[p.status]}>{p.status}</Badge>
                  <span className="font-mono text-xs">{p.image_url}</span>
                  <span className="text-xs text-slate-500">{formatDateTime(p.started_at)}</span>
                  {p.outcome ? <span className="text-xs text-slate-600">{p.outcome}</span> : null}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
      </div>
    </Card>
  );
}
