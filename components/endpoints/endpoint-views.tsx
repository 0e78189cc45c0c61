import Link from "next/link";
import { CopyLine } from "@/components/ui/copy-line";
import {
  createEndpointKeyAction,
  deleteEndpointAction,
  revokeEndpointKeyAction,
  stopStartEndpointAction,
  updateEndpointAction,
} from "@/app/_actions/endpoints";
import { CreateEndpointKeyForm, RevokeEndpointKeyButton } from "@/components/forms/endpoint-key-forms";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { EndpointLatencyChart, EndpointTokensChart, EndpointTrafficChart } from "@/components/fleet/charts";
import { DeleteEndpointButton, EndpointSettingsForm, StopStartEndpointButton } from "@/components/forms/endpoint-forms";
import { Badge, type Tone } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { TimeRangePicker } from "@/components/ui/time-range-picker";
import type { SlaSummary } from "@/lib/endpoints/endpoint-page";
import type { EndpointJson, SeriesJson, SlaJson } from "@/lib/endpoints/schemas";
import type { TimelineSlot } from "@/lib/endpoints/sla";
import { describeRange, describeStep, type TimeRange } from "@/lib/metrics/time-range";
import type { Headline } from "@/lib/endpoints/endpoint-headline";
import { EndpointSlaPanel, SlaCell, type SlaAlertView } from "./endpoint-sla";

const endpointTones: Record<string, Tone> = {
  provisioning: "sky",
  ready: "green",
  scaling: "indigo",
  degraded: "amber",
  failed: "red",
  stopped: "neutral",
};
const replicaTones: Record<string, Tone> = { starting: "sky", ready: "green", unhealthy: "amber", stopped: "neutral" };
const EndpointStatus = ({ status }: { status: string }) => <Badge tone={endpointTones[status] ?? "neutral"}>{status}</Badge>;
const ReplicaStatus = ({ status }: { status: string }) => <Badge tone={replicaTones[status] ?? "neutral"}>{status}</Badge>;

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
const HEADLINE_TONES = {
  green: "bg-emerald-50 text-emerald-900 ring-emerald-200",
  amber: "bg-amber-50 text-amber-900 ring-amber-200",
  red: "bg-red-50 text-red-900 ring-red-200",
  sky: "bg-sky-50 text-sky-900 ring-sky-200",
} as const;

export function EndpointsTable({
  endpoints,
  hrefBase,
  tenantNames,
  sla,
  alertHref,
}: {
  endpoints: EndpointJson[];
  hrefBase: string;
  tenantNames?: Map<string, string>;
  sla?: Map<string, SlaSummary>;
  alertHref: (id: string) => string;
}) {
  if (endpoints.length === 0) {
    return (
      <EmptyState title="No inference endpoints yet">
        An endpoint serves a model from replicas on the fleet&apos;s GPUs; its status, traffic and SLA show here.
      </EmptyState>
    );
  }
  return (
    <Table caption="Inference endpoints">
      <thead className="bg-slate-50">
        <tr>
          <Th pin="left">Endpoint and status</Th>
          {tenantNames ? <Th>Tenant</Th> : null}
          <Th>Model</Th>
          <Th className="text-right">Replicas ready</Th>
          <Th>GPUs held</Th>
          <Th>SLA</Th>
          <Th>Created</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {endpoints.map((e) => (
          <tr key={e.id} data-testid={`endpoint-row-${e.name}`}>
            <Td className="font-medium text-slate-900" pin="left">
              <Link className="text-indigo-700 hover:underline" href={`${hrefBase}/${e.id}`}>
                {e.name}
              </Link>
              <span className="mt-1 block">
                <EndpointStatus status={e.status} />
              </span>
            </Td>
            {tenantNames ? <Td>{tenantNames.get(e.tenant_id) ?? e.tenant_id.slice(0, 8)}</Td> : null}
            <Td wrap className="max-w-xs text-xs text-slate-600">
              {e.model}
            </Td>
            <Td className="text-right tabular-nums">
              {e.ready_replicas} / {e.replicas}
              <span className="text-xs text-slate-500">
                {" "}
                ({e.min_replicas}–{e.max_replicas})
              </span>
            </Td>
            <Td className="tabular-nums">
              {e.gpus_held} × {e.gpu_type}
            </Td>
            <Td>
              <SlaCell
                target={[e.sla_p95_ms ? `p95 ≤ ${e.sla_p95_ms} ms` : null, e.sla_availability_pct ? `${e.sla_availability_pct} %` : null]
                  .filter(Boolean)
                  .join(" · ")}
                summary={sla?.get(e.id)}
                alertHref={alertHref}
              />
            </Td>
            <Td>{formatRelative(e.created_at)}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

export function EndpointDetail(props: {
  endpoint: EndpointJson;
  series: SeriesJson;
  sla: SlaJson;
  timeline: TimelineSlot[];
  slaAlert: SlaAlertView;
  /** the status and whether the SLA holds now (lib/endpoints/endpoint-headline.ts) */
  headline: Headline;
  /** the window the SLA figures cover, named */
  slaWindow: string;
  range: TimeRange;
  basePath: string;
  alertsHref: string;
  history: {
    transitions: Array<{ from_status: string | null; to_status: string; reason: string; actor: string; created_at: string }>;
    scaling: Array<{
      from_replicas: number;
      to_replicas: number;
      metric: string;
      observed: number | null;
      outcome: string;
      reason: string;
      created_at: string;
    }>;
  };
  listHref: string;
  listLabel: string;
  tenantName?: string;
  apiBase: string;
  justCreated?: boolean;
  /** the endpoint's own keys, for tenant admins and operators (null: the viewer may not manage them) */
  keys?: Array<{
    id: string;
    name: string;
    prefix: string;
    created_by: string;
    created_at: string;
    expires_at: string | null;
    last_used_at: string | null;
    revoked_at: string | null;
  }> | null;
}) {
  const { endpoint: e, series, sla, history, range } = props;
  const live = e.replica_list.filter((r) => r.status !== "stopped");
  const stopped = e.replica_list.filter((r) => r.status === "stopped");
  const words = describeRange(range);
  const hasTraffic = series.points.some((x) => x.requests_per_s !== null);
  const hasTokens = series.points.some((x) => x.tokens_per_s !== null);
  const headline = props.headline;
  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
        <Link href={props.listHref} className="hover:underline">
          {props.listLabel}
        </Link>{" "}
        / <span aria-current="page">{e.name}</span>
      </nav>
      <PageHeader
        title={e.name}
        description={`${e.model} · ${e.gpus_per_replica} × ${e.gpu_type} per replica${props.tenantName ? ` · ${props.tenantName}` : ""}`}
        actions={
          <div className="flex flex-wrap items-center gap-3">
            <EndpointStatus status={e.status} />
            {headline.tone === "red" ? <Badge tone="red">SLA missed</Badge> : null}
            <StopStartEndpointButton action={stopStartEndpointAction} id={e.id} name={e.name} stopped={e.stopped} />
            <DeleteEndpointButton action={deleteEndpointAction} id={e.id} name={e.name} after={props.listHref} />
            {range.key === "custom" ? null : <AutoRefresh seconds={5} />}
          </div>
        }
      />
      {props.justCreated ? (
        <p role="status" className="mb-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900 ring-1 ring-emerald-200">
          “{e.name}” created: its replicas are being placed. Each turns ready on its first healthy sample; SLA figures start then.
        </p>
      ) : null}
      {headline.text ? (
        <p
          role="status"
          data-testid="endpoint-headline"
          data-tone={headline.tone}
          className={`mb-6 rounded-lg px-4 py-3 text-sm ring-1 ${HEADLINE_TONES[headline.tone]}`}
        >
          <strong>{headline.title}:</strong> {headline.text}
        </p>
      ) : null}
      <Card className="mb-6" aria-label="Call this endpoint">
        <CardHeader
          title="Call it"
          description="The inference gateway sends each request to the ready replica with the fewest requests in flight, streams responses through, and records requests, errors and latency for the SLA below. Use a tenant API key, or a key for this endpoint only (below, or POST /api/endpoints/{id}/keys)."
        />
        <div className="space-y-4 p-5">
          <CopyLine text={e.url} label="Endpoint URL" />
          <pre
            tabIndex={0}
            aria-label="Example call"
            data-testid="gateway-curl"
            className="overflow-x-auto rounded-lg bg-slate-50 p-4 text-xs text-slate-700 ring-1 ring-slate-200"
          >
            <code>{`curl ${e.url}/v1/chat/completions \\
  -H "Authorization: Bearer $GPUFORGE_KEY" -H "content-type: application/json" \\
  -d '{"model":"${e.model}","messages":[{"role":"user","content":"Hello"}],"stream":true}'`}</code>
          </pre>
        </div>
      </Card>
      <div className="grid grid-cols-2 gap-4">
        <Stat
          label="Replicas ready"
          value={`${e.ready_replicas} / ${e.replicas}`}
          hint={`min ${e.min_replicas}, max ${e.max_replicas}${e.autoscale_metric !== "none" ? ", autoscaled" : ""}`}
        />
        <Stat
          label="GPUs held"
          value={e.gpus_held}
          hint={`${e.gpu_type}, on ${plural(new Set(live.map((r) => r.node_id)).size, "node")}`}
        />
      </div>
      <div className="mt-6 flex flex-wrap items-center justify-between gap-3">
        <h2 className="text-base font-semibold text-slate-900">Service level and traffic, {words}</h2>
        <TimeRangePicker base={props.basePath} range={range} />
      </div>
      <EndpointSlaPanel
        sla={sla}
        timeline={props.timeline}
        alert={props.slaAlert}
        rangeWords={words}
        windowWords={props.slaWindow}
        alertsHref={props.alertsHref}
      />
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader title={`Requests per second, ${words}`} description={`${describeStep(series.step_s)} steps, UTC; gaps: no samples`} />
          <div className="p-5" data-testid="endpoint-traffic" data-from={series.from} data-step={series.step_s}>
            {hasTraffic ? (
              <>
                <EndpointTrafficChart points={series.points} />
                {hasTokens ? (
                  <figure className="mt-4">
                    <figcaption className="mb-1 text-xs font-medium text-slate-700">
                      Tokens per second, as the replicas report them
                    </figcaption>
                    <EndpointTokensChart points={series.points} />
                  </figure>
                ) : null}
              </>
            ) : (
              <EmptyState title="No traffic reported in this range">
                Samples posted to the metrics API appear here within seconds.
              </EmptyState>
            )}
          </div>
        </Card>
        <Card>
          <CardHeader
            title={`Latency, ${words}`}
            description={
              e.sla_p95_ms
                ? `p50 / p95 / p99 of ${describeStep(series.step_s)} steps against the ${e.sla_p95_ms} ms p95 target`
                : `p50 / p95 / p99 of ${describeStep(series.step_s)} steps`
            }
          />
          <div className="p-5">
            {hasTraffic ? (
              <EndpointLatencyChart points={series.points} slaP95Ms={e.sla_p95_ms} />
            ) : (
              <EmptyState title="No latency reported in this range" />
            )}
          </div>
        </Card>
      </div>
      <Card className="mt-6">
        <CardHeader
          title="Replicas"
          description="Where each replica runs and how it is doing; replaced replicas are kept below for a while."
        />
        {e.replica_list.length === 0 ? (
          <EmptyState title="No replicas placed">
            {e.stopped ? "The endpoint is stopped." : "Waiting for free GPUs of this type within your quota."}
          </EmptyState>
        ) : (
          <Table caption="Replicas">
            <thead className="bg-slate-50">
              <tr>
                <Th>Replica</Th>
                <Th>Status</Th>
                <Th>Node</Th>
                <Th>GPUs</Th>
                <Th>Started</Th>
                <Th>Last sample</Th>
                <Th>Note</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {[...live, ...stopped].map((r) => (
                <tr key={r.id} className={r.status === "stopped" ? "text-slate-500" : undefined}>
                  <Td>
                    <code className="text-xs">{r.id.slice(0, 8)}</code>
                  </Td>
                  <Td>
                    <ReplicaStatus status={r.status} />
                  </Td>
                  <Td>{r.hostname ?? "—"}</Td>
                  <Td className="tabular-nums">{r.gpu_indexes.length ? r.gpu_indexes.map((i) => `GPU ${i}`).join(", ") : "—"}</Td>
                  <Td>{formatRelative(r.started_at)}</Td>
                  <Td>{formatRelative(r.last_sample_at)}</Td>
                  <Td wrap className="max-w-sm text-xs">
                    {r.stop_reason ??
                      r.health_reason ??
                      (r.status === "starting" ? "loading the model; ready on its first healthy sample" : "")}
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader title="Scaling and SLA targets" description="Replica changes apply at once; the autoscaler stays within min and max." />
        <EndpointSettingsForm
          action={updateEndpointAction}
          endpoint={{
            id: e.id,
            replicas: e.replicas,
            min: e.min_replicas,
            max: e.max_replicas,
            slaP95Ms: e.sla_p95_ms,
            slaAvailabilityPct: e.sla_availability_pct,
            metric: e.autoscale_metric,
            target: e.autoscale_target,
            cooldownS: e.cooldown_s,
          }}
        />
      </Card>
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader title="Scaling decisions" />
          {history.scaling.length === 0 ? (
            <EmptyState title="No scaling decisions yet" />
          ) : (
            <ol className="divide-y divide-slate-100">
              {history.scaling.slice(0, 20).map((d, i) => (
                <li key={i} className="flex items-start justify-between gap-4 px-5 py-3 text-sm">
                  <span>
                    <Badge tone={d.outcome === "held" ? "neutral" : d.outcome === "scale_up" ? "indigo" : "sky"}>
                      {d.outcome.replace("_", " ")}
                    </Badge>{" "}
                    <span className="ml-1 tabular-nums">
                      {d.from_replicas} → {d.to_replicas}
                    </span>{" "}
                    <span className="ml-2 text-slate-600">{d.reason}</span>
                  </span>
                  <time className="shrink-0 text-xs text-slate-500" dateTime={d.created_at}>
                    {formatDateTime(d.created_at)}
                  </time>
                </li>
              ))}
            </ol>
          )}
        </Card>
        <Card>
          <CardHeader title="Status history" />
          <ol className="divide-y divide-slate-100">
            {history.transitions.slice(0, 20).map((t, i) => (
              <li key={i} className="flex items-start justify-between gap-4 px-5 py-3 text-sm">
                <span>
                  {t.from_status ? (
                    <>
                      <EndpointStatus status={t.from_status} /> →{" "}
                    </>
                  ) : null}
                  <EndpointStatus status={t.to_status} /> <span className="ml-2 text-slate-600">{t.reason}</span>{" "}
                  <span className="text-slate-500">· {t.actor}</span>
                </span>
                <time className="shrink-0 text-xs text-slate-500" dateTime={t.created_at}>
                  {formatDateTime(t.created_at)}
                </time>
              </li>
            ))}
          </ol>
        </Card>
      </div>
      {props.keys ? (
        <Card className="mt-6">
          <CardHeader
            title="Endpoint keys"
            description="Keys that call this endpoint through the gateway and nothing else: give one to an application instead of a tenant key."
          />
          {props.keys.length ? (
            <Table caption="Endpoint keys">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Name</Th>
                  <Th>Key</Th>
                  <Th>Created</Th>
                  <Th>Last used</Th>
                  <Th className="text-right">Status</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {props.keys.map((k) => (
                  <tr key={k.id} className={k.revoked_at ? "text-slate-500" : undefined}>
                    <Td className="font-medium">{k.name}</Td>
                    <Td>
                      <code className="text-xs">{k.prefix}…</code>
                    </Td>
                    <Td>
                      {formatRelative(k.created_at)} <span className="text-xs text-slate-500">by {k.created_by}</span>
                    </Td>
                    <Td>{k.last_used_at ? formatRelative(k.last_used_at) : "never"}</Td>
                    <Td className="text-right">
                      {k.revoked_at ? (
                        <Badge tone="neutral">revoked</Badge>
                      ) : (
                        <RevokeEndpointKeyButton action={revokeEndpointKeyAction} endpointId={e.id} id={k.id} prefix={k.prefix} />
                      )}
                    </Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          ) : null}
          <CreateEndpointKeyForm action={createEndpointKeyAction} endpointId={e.id} />
        </Card>
      ) : null}
      <Card className="mt-6">
        <CardHeader
          title="Report serving metrics"
          description="Each serving container posts its own replica's samples with the report token the agent gives it (GPUFORGE_REPORT_TOKEN); your own tooling can post with a tenant key. A sample with healthy=false marks its replica unhealthy."
        />
        <pre tabIndex={0} aria-label="Example request" className="overflow-x-auto p-5 text-xs text-slate-700">
          <code>{`curl -X POST ${props.apiBase}/api/endpoints/${e.id}/metrics \\
  -H "Authorization: Bearer $GPUFORGE_KEY" -H "content-type: application/json" \\
  -d '{"samples":[{"replica_id":"${live[0]?.id ?? "<replica id>"}","requests":412,"errors":1,"p50_ms":180,"p95_ms":540,"p99_ms":910,"tokens_per_s":5200}]}'`}</code>
        </pre>
      </Card>
    </>
  );
}
