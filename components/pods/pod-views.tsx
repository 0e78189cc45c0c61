import Link from "next/link";
import { podStateAction } from "@/app/_actions/pods";
import { PodActionButton } from "@/components/forms/pod-forms";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { Badge, type Tone } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { CopyLine } from "@/components/ui/copy-line";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { OutputCard, HeldGpusCard } from "@/components/workloads/workload-sections";
import { formatCents } from "@/lib/billing/money";
import type { PodJson } from "@/lib/pods/schemas";

// Pods in the console: the list (tenant and operator planes) and a pod's page. Plain props in,
// from lib/pods (podJson, podPageData); the buttons post the pods' server actions.

const tones: Record<string, Tone> = {
  pending: "sky",
  starting: "sky",
  running: "green",
  stopping: "amber",
  stopped: "neutral",
  failed: "red",
  terminated: "neutral",
};
const PodStatus = ({ status }: { status: string }) => <Badge tone={tones[status] ?? "neutral"}>{status}</Badge>;

const VERBS = ["stop", "start", "terminate"] as const;
type Actions = { stop: boolean; start: boolean; terminate: boolean };

function PodButtons({ pod, actions }: { pod: { id: string; name: string }; actions: Actions }) {
  return (
    <>
      {VERBS.filter((v) => actions[v]).map((v) => (
        <PodActionButton key={v} action={podStateAction} id={pod.id} name={pod.name} verb={v} />
      ))}
    </>
  );
}

/** Where a published port is reached: its host port on the node's address. */
export function PodsTable({
  pods,
  hrefBase,
  tenantNames,
  actionsOf,
}: {
  pods: PodJson[];
  hrefBase: string;
  tenantNames?: Map<string, string>;
  actionsOf?: (p: PodJson) => Actions;
}) {
  return (
    <Table caption="Pods">
      <thead className="bg-slate-50">
        <tr>
          <Th pin="left">Pod and status</Th>
          {tenantNames ? <Th>Tenant</Th> : null}
          <Th>GPUs</Th>
          <Th>Node / why waiting</Th>
          <Th className="text-right">Cost so far</Th>
          <Th>Created</Th>
          {actionsOf ? (
            <Th className="text-right" pin="right">
              Actions
            </Th>
          ) : null}
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {pods.map((p) => (
          <tr key={p.id} data-testid={`pod-row-${p.name}`} className="align-top">
            <Td className="font-medium" pin="left">
              <Link className="text-indigo-700 hover:underline" href={`${hrefBase}/${p.id}`}>
                {p.name}
              </Link>
              <span className="mt-1 block">
                <PodStatus status={p.status} />
              </span>
            </Td>
            {tenantNames ? (
              <Td>
                <Link className="hover:underline" href={`/admin/tenants/${p.tenant_id}`}>
                  {tenantNames.get(p.tenant_id) ?? p.tenant_id.slice(0, 8)}
                </Link>
              </Td>
            ) : null}
            <Td className="tabular-nums">
              {p.gpu_count} × {p.gpu_type}
            </Td>
            <Td wrap className="max-w-sm text-xs text-slate-600">
              {p.status === "pending"
                ? (p.pending_reason ?? "Waiting for the next scheduling cycle")
                : (p.hostname ?? p.status_reason ?? "—")}
            </Td>
            <Td className="text-right tabular-nums">{formatCents(p.cost_cents)}</Td>
            <Td>
              <span title={formatDateTime(p.created_at)}>{formatRelative(p.created_at)}</span>
            </Td>
            {actionsOf ? (
              <Td className="text-right" pin="right">
                <div className="flex justify-end gap-2">
                  <PodButtons pod={p} actions={actionsOf(p)} />
                </div>
              </Td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

interface PodDetailProps {
  pod: PodJson;
  actions: Actions;
  events: Array<{ from_status: string | null; to_status: string; reason: string; actor: string; created_at: string }>;
  placements: Array<{
    attempt: number;
    hostname: string | null;
    gpus: number;
    started_at: string;
    running_at: string | null;
    ended_at: string | null;
    end_status: string | null;
  }>;
  telemetry: {
    from: string;
    to: string;
    series: Array<{
      label: string;
      points: Array<{ t: string; utilization_avg: number; memory_used_avg_mb: number; temperature_avg_c: number; power_avg_w: number }>;
    }>;
  };
  listHref: string;
  listLabel: string;
  tenantName?: string;
  justCreated?: boolean;
  ratePerHourCents: number | null;
}

export function PodDetail(props: PodDetailProps) {
  const { pod: p, placements } = props;
  const open = p.status !== "terminated";
  const served = p.ports.filter((x) => x.access === "gateway");
  const waiting = p.status === "pending" ? (p.pending_reason ?? "Waiting for the next scheduling cycle.") : null;
  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
        <Link href={props.listHref} className="hover:underline">
          {props.listLabel}
        </Link>{" "}
        / <span aria-current="page">{p.name}</span>
      </nav>
      <PageHeader
        title={p.name}
        description={`${p.gpu_count} × ${p.gpu_type} · ${p.image}${props.tenantName ? ` · ${props.tenantName}` : ""}`}
        actions={
          <div className="flex flex-wrap items-center gap-3" data-testid="pod-actions">
            <PodStatus status={p.status} />
            <PodButtons pod={p} actions={props.actions} />
            {open ? <AutoRefresh seconds={5} /> : null}
          </div>
        }
      />
      {/* only while it is still on its way: once it runs (or stopped, or failed) the status says what happened */}
      {props.justCreated && (p.status === "pending" || p.status === "starting") ? (
        <p role="status" className="mb-4 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-900 ring-1 ring-emerald-200">
          “{p.name}” created: it is placed on free GPUs at the next scheduling cycle, then its node starts the container. Billing starts
          when the container runs.
        </p>
      ) : null}
      {waiting || p.status_reason ? (
        <p
          role="status"
          className={`mb-6 rounded-lg px-4 py-3 text-sm ring-1 ${p.status === "failed" ? "bg-amber-50 text-amber-900 ring-amber-200" : p.status === "running" ? "bg-emerald-50 text-emerald-900 ring-emerald-200" : "bg-sky-50 text-sky-900 ring-sky-200"}`}
        >
          <strong className="capitalize">{p.status}:</strong> {waiting ?? p.status_reason}
        </p>
      ) : null}
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <Stat
          label="Cost so far"
          value={<span data-testid="pod-cost">{formatCents(p.cost_cents)}</span>}
          hint={
            props.ratePerHourCents !== null
              ? `${formatCents(props.ratePerHourCents * p.gpu_count)} per hour while running, billed per second`
              : "Billed per second while running"
          }
        />
        <Stat
          label="Running since"
          value={p.running_since ? formatRelative(p.running_since) : "—"}
          hint={p.running_since ? formatDateTime(p.running_since) : "Not running"}
        />
        <Stat label="Node" value={p.hostname ?? "—"} hint={p.host ? `Reached at ${p.host}` : "Placed when it starts"} />
        <Stat label="Runs" value={p.attempt} hint={p.restart_on_failure ? "Restarts elsewhere on failure" : "Not restarted on failure"} />
      </div>
      <Card className="mt-6">
        <CardHeader
          title="Connect"
          description={
            p.ssh_key_fingerprint
              ? `SSH as root with the key ${p.ssh_key_fingerprint}. The pod's other ports answer only the inference gateway, with a key of your organisation, or your SSH tunnel.`
              : "The pod's ports answer only the inference gateway, with a key of your organisation. Add an SSH key when you create a pod to get SSH access and tunnels."
          }
        />
        <div className="space-y-4 p-5">
          {p.ssh_command ? (
            <div>
              <p className="mb-2 text-sm font-medium text-slate-700">SSH{served.length ? ", with a tunnel to each port" : ""}</p>
              <CopyLine text={p.ssh_command} label="SSH command" />
              {served.length ? (
                <p className="mt-2 text-xs text-slate-500">
                  While it is open, your browser reaches port {served[0]!.container_port} at http://localhost:{served[0]!.container_port}/.
                </p>
              ) : null}
            </div>
          ) : p.ssh_key_fingerprint ? (
            <p className="text-sm text-slate-600">The SSH command appears here once the pod runs.</p>
          ) : null}
          {served.length ? (
            <div>
              <p className="mb-2 text-sm font-medium text-slate-700">Through the gateway</p>
              <ul className="space-y-2 text-sm" aria-label="Ports through the gateway">
                {served.map((x) => (
                  <li key={x.container_port}>
                    {x.url ? (
                      <CopyLine
                        text={`curl -H "Authorization: Bearer $GPUFORGE_KEY" ${x.url}`}
                        label={`Port ${x.container_port} through the gateway`}
                      />
                    ) : (
                      <span className="rounded-md px-2 py-1 text-slate-500 ring-1 ring-slate-200">
                        Port {x.container_port} (reachable once the pod runs)
                      </span>
                    )}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          {!p.ssh_key_fingerprint && p.ports.length === 0 ? <p className="text-sm text-slate-600">This pod publishes no ports.</p> : null}
        </div>
      </Card>
      <OutputCard
        title="Logs"
        description="stdout and stderr of the pod's container, run by run, as its node ships them"
        sources={placements.map((pl) => ({
          url: `/api/pods/${p.id}/logs`,
          params: { attempt: String(pl.attempt) },
          live: pl.ended_at === null,
        }))}
        labels={placements.map(
          (pl) => `Run ${pl.attempt} on ${pl.hostname ?? "?"}${pl.ended_at ? ` (${pl.end_status ?? "ended"})` : " (current)"}`,
        )}
        initial={0}
        emptyText="Nothing printed yet. Output appears here seconds after the container writes it."
      />
      <HeldGpusCard
        title="GPUs this pod held"
        window={props.telemetry}
        series={props.telemetry.series}
        emptyText={placements.length ? "The node has not reported samples for these GPUs yet." : "The pod has not run yet."}
      />
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader title="Status history" description="Every transition, with who and why." />
          <ol className="divide-y divide-slate-100" aria-label="Status history">
            {props.events.map((e, i) => (
              <li key={i} className="flex items-start justify-between gap-4 px-5 py-3 text-sm">
                <span>
                  {e.from_status ? (
                    <>
                      <PodStatus status={e.from_status} /> →{" "}
                    </>
                  ) : null}
                  <PodStatus status={e.to_status} /> <span className="ml-2 text-slate-600">{e.reason}</span>{" "}
                  <span className="text-slate-500">· {e.actor}</span>
                </span>
                <time className="shrink-0 text-xs text-slate-500" dateTime={e.created_at}>
                  {formatDateTime(e.created_at)}
                </time>
              </li>
            ))}
          </ol>
        </Card>
        <Card>
          <CardHeader
            title="Runs"
            description="Each time the pod ran, where, and how it ended. Stop and start may place it on another node."
          />
          {placements.length === 0 ? (
            <EmptyState title="Not placed yet" />
          ) : (
            <Table caption="Runs">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Run</Th>
                  <Th>Node</Th>
                  <Th>Running</Th>
                  <Th>Ended</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {placements.map((pl) => (
                  <tr key={pl.attempt}>
                    <Td className="tabular-nums">{pl.attempt}</Td>
                    <Td>{pl.hostname ?? "—"}</Td>
                    <Td>{pl.running_at ? formatDateTime(pl.running_at) : "—"}</Td>
                    <Td>{pl.ended_at ? `${formatDateTime(pl.ended_at)} (${pl.end_status ?? "ended"})` : "—"}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </Card>
      </div>
    </>
  );
}
