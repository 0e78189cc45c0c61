import { HandoverActions } from "@/components/forms/handover-actions";
import type { FormAction } from "@/components/forms/use-action-form";
import { Badge, type Tone } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { formDuration, formatDateTime } from "@/components/ui/format";
import type { NodeHandoverView } from "@/lib/handover/node-handover-view";

// The node page's handover and attestation card: what a node went through between tenants (each
// workflow's steps, with the lease token each was written under), its latest signed verdict with
// every failure, and the attestation key it enrolled. The verdict downloads as its JWS, which
// anyone checks offline against the public key set.

type Workflow = NodeHandoverView["workflows"][number];
type Step = Workflow["steps"][number];

const STEP_TONE: Record<Step["status"], string> = {
  running: "bg-teal-500 ring-teal-200 animate-pulse",
  succeeded: "bg-emerald-500 ring-emerald-100",
  failed: "bg-red-600 ring-red-100",
  skipped: "bg-slate-400 ring-slate-100",
};
const WORKFLOW_TONE: Record<Workflow["status"], Tone> = { running: "teal", succeeded: "green", failed: "red", cancelled: "neutral" };

const STEP_LABELS: Record<string, string> = { release: "Release", wipe: "Wipe", attest: "Attest" };

function DeviceList({ devices }: { devices: unknown }) {
  if (!Array.isArray(devices) || devices.length === 0) return null;
  const rows = devices as Array<{ device?: string; uuid?: string; index?: number; method?: string; result?: string; message?: string }>;
  return (
    <ul className="mt-1.5 grid gap-x-4 gap-y-0.5 text-xs text-slate-600 sm:grid-cols-2">
      {rows.slice(0, 24).map((d, i) => (
        <li key={i} className="flex min-w-0 items-center gap-1.5">
          <span
            aria-hidden
            className={cn(
              "h-1.5 w-1.5 shrink-0 rounded-full",
              d.result === "failed" ? "bg-red-600" : d.result === "ok" ? "bg-emerald-500" : "bg-slate-300",
            )}
          />
          <span className="truncate font-mono" title={d.device ?? d.uuid}>
            {d.device ?? (d.uuid ? `GPU ${d.index} ${d.uuid}` : "")}
          </span>
          {d.method ? <span className="truncate text-slate-500">· {d.method}</span> : null}
          {d.result ? <span className="sr-only">{d.result}</span> : null}
          {d.message ? <span className="truncate text-red-700">· {d.message}</span> : null}
        </li>
      ))}
    </ul>
  );
}

function Timeline({ w }: { w: Workflow }) {
  return (
    <li className="px-5 py-4" data-testid="handover-workflow" data-status={w.status}>
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <p className="text-sm font-medium text-slate-900">
          {w.kind === "provisioning" ? "Provisioning" : w.details.mode === "inspect" ? "Re-inspection" : "Handover"}{" "}
          <Badge tone={WORKFLOW_TONE[w.status]}>{w.status}</Badge>{" "}
          <span className="font-normal text-slate-500">
            · {w.trigger === "tenancy_ended" ? "a tenancy ended" : `by ${w.requested_by}`} · {w.reason}
          </span>
        </p>
        <p className="text-xs text-slate-500">
          <time dateTime={w.started_at}>{formatDateTime(w.started_at)}</time>
          {w.finished_at ? ` · took ${formDuration(w.started_at, w.finished_at)}` : ""}
        </p>
      </div>
      {w.outcome ? <p className={cn("mt-1 text-sm", w.status === "failed" ? "text-red-700" : "text-slate-600")}>{w.outcome}</p> : null}
      <ol className="mt-3 space-y-3 border-l-2 border-slate-100 pl-4" aria-label="Steps">
        {w.steps.map((s) => (
          <li key={`${s.name}-${s.started_at}`} className="relative" data-step={s.name} data-step-status={s.status}>
            <span aria-hidden className={cn("absolute -left-[23px] top-1.5 h-3 w-3 rounded-full ring-4", STEP_TONE[s.status])} />
            <div className="flex flex-wrap items-baseline justify-between gap-2 text-sm">
              <span>
                <span className="font-medium text-slate-900">{STEP_LABELS[s.name] ?? s.name.replace(/[_.-]/g, " ")}</span>{" "}
                <span className="text-slate-500">{s.status}</span>
                {s.message ? <span className="text-slate-600"> · {s.message}</span> : null}
              </span>
              <span className="text-xs tabular-nums text-slate-500">
                {s.finished_at ? formDuration(s.started_at, s.finished_at) : "in progress"}
                {s.lease_token ? (
                  <span title="The fencing token of the lease this step was written under"> · token {s.lease_token}</span>
                ) : null}
              </span>
            </div>
            <DeviceList devices={s.details.devices} />
          </li>
        ))}
      </ol>
    </li>
  );
}

function Verdict({ v, nodeId }: { v: NonNullable<NodeHandoverView["verdict"]>; nodeId: string }) {
  const file = `attestation-${nodeId.slice(0, 8)}-${v.created_at.slice(0, 19).replace(/[-:]/g, "")}.jws`;
  return (
    <div data-testid="latest-verdict" data-result={v.result}>
      <div className="flex flex-wrap items-center gap-3">
        <span
          className={cn(
            "rounded-md px-3 py-1 text-sm font-semibold tracking-wide",
            v.result === "pass"
              ? "bg-emerald-50 text-emerald-800 ring-1 ring-emerald-600/20"
              : "bg-red-50 text-red-800 ring-1 ring-red-600/20",
          )}
        >
          {v.result === "pass" ? "PASS" : "FAIL"}
        </span>
        <span className="text-sm text-slate-700">
          {v.policy ? (
            <>
              policy <span className="font-medium">{v.policy}</span> v{v.policy_version}
            </>
          ) : (
            "no policy"
          )}
        </span>
        {v.tpm_kind === "simulated" ? (
          <Badge tone="amber">simulated TPM</Badge>
        ) : v.tpm_kind ? (
          <Badge tone="neutral">{v.tpm_kind}</Badge>
        ) : null}
      </div>
      <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-xs">
        <dt className="text-slate-500">Judged</dt>
        <dd className="text-slate-700">{formatDateTime(v.created_at)}</dd>
        <dt className="text-slate-500">Signing key</dt>
        <dd className="truncate font-mono text-slate-700" title={v.kid}>
          {v.kid}
        </dd>
        <dt className="text-slate-500">PCR digest</dt>
        <dd className="truncate font-mono text-slate-700" title={v.pcr_digest ?? undefined}>
          {v.pcr_digest ?? "—"}
        </dd>
      </dl>
      {v.failures.length ? (
        <ul className="mt-3 divide-y divide-red-100 rounded-md bg-red-50/60 ring-1 ring-red-100" aria-label="Failures">
          {v.failures.map((f, i) => (
            <li key={i} className="px-3 py-2 text-sm">
              <span className="font-mono text-xs font-semibold text-red-800">{f.code}</span>{" "}
              <Badge tone={f.severity === "critical" ? "red" : "amber"}>{f.severity}</Badge>
              <p className="mt-0.5 text-slate-700">{f.message}</p>
            </li>
          ))}
        </ul>
      ) : null}
      <div className="mt-3 flex flex-wrap items-center gap-3 text-sm">
        <a
          className="font-medium text-indigo-700 underline"
          href={`data:application/jose;charset=utf-8,${encodeURIComponent(v.jws)}`}
          download={file}
        >
          Download the signed verdict (JWS)
        </a>
        <span className="text-xs text-slate-500">
          check it offline: <code className="font-mono">npm run verify-attestation -- {file} --jwks …/v1/attestation/keys</code>
        </span>
      </div>
    </div>
  );
}

export function NodeHandoverCard({
  view,
  nodeId,
  hostname,
  startAction,
  reenrolAction,
}: {
  view: NodeHandoverView;
  nodeId: string;
  hostname: string;
  startAction: FormAction;
  reenrolAction: FormAction;
}) {
  return (
    <Card className="mt-6" aria-label="Handover and attestation">
      <CardHeader
        title="Handover and attestation"
        description="Between tenants a node is released, wiped and attested with its TPM before it takes work again; a failure quarantines it."
      />
      <div className="space-y-5 p-5">
        {view.dueSince ? (
          <p className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-amber-200" role="note">
            A handover is due since {formatDateTime(view.dueSince)}: this node returns to service only through one (hand it over, or
            re-inspect it).
          </p>
        ) : null}
        <HandoverActions startAction={startAction} reenrolAction={reenrolAction} nodeId={nodeId} hostname={hostname} can={view.can} />
        <div className="grid gap-6 lg:grid-cols-3">
          <section className="lg:col-span-2" aria-label="Latest verdict">
            <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-500">Latest verdict</h3>
            {view.verdict ? <Verdict v={view.verdict} nodeId={nodeId} /> : <p className="text-sm text-slate-500">Never attested.</p>}
          </section>
          <section aria-label="Attestation key">
            <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-500">Attestation key</h3>
            {view.identity ? (
              <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-xs">
                <dt className="text-slate-500">TPM</dt>
                <dd className="text-slate-700">
                  {view.identity.tpm_kind === "simulated" ? "simulated (not a TPM: proves nothing)" : view.identity.tpm_kind}
                </dd>
                <dt className="text-slate-500">Qualified name</dt>
                <dd className="truncate font-mono text-slate-700" title={view.identity.ak_qualified_name ?? undefined}>
                  {view.identity.ak_qualified_name ?? "—"}
                </dd>
                <dt className="text-slate-500">Pinned</dt>
                <dd className="text-slate-700">{formatDateTime(view.identity.enrolled_at)}</dd>
              </dl>
            ) : (
              <p className="text-sm text-slate-500">No key enrolled yet: the node enrols one at its first attestation.</p>
            )}
            {view.lease ? (
              <p className="mt-3 text-xs text-slate-500">
                Lease: token {view.lease.token}
                {view.lease.live ? ` held by ${view.lease.holder} for ${view.lease.purpose}` : " (free)"}
              </p>
            ) : null}
          </section>
        </div>
      </div>
      <div className="border-t border-slate-100">
        <h3 className="px-5 pt-4 text-xs font-semibold uppercase tracking-wide text-slate-500">Timeline</h3>
        {view.workflows.length === 0 ? (
          <EmptyState title="No handover yet">One runs when a whole-node tenancy ends, or when you start one.</EmptyState>
        ) : (
          <ol className="divide-y divide-slate-100" aria-label="Handovers and provisionings, newest first">
            {view.workflows.map((w) => (
              <Timeline key={w.id} w={w} />
            ))}
          </ol>
        )}
      </div>
    </Card>
  );
}
