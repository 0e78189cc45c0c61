import Link from "next/link";
import { endReservationAction, extendReservationAction } from "@/app/_actions/reservations";
import { JobStatus } from "@/components/shell/jobs-table";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { ReservationStatus } from "@/components/reservations/reservation-badges";
import { EndReservationButton, ExtendReservationForm } from "@/components/reservations/reservation-forms";
import { NodesByRack, TopologyLine } from "@/components/reservations/nodes-by-rack";
import { NodeVerdicts } from "@/components/reservations/node-verdicts";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { page } from "@/lib/pages/page";
import { reservationPageData } from "@/lib/reservations/reservation-page";

export const metadata = { title: "Reservation" };

export default page(
  {
    plane: "tenant",
    path: "/dashboard/reservations/[id]",
    ids: ["id"],
    load: ({ principal, ids }) => reservationPageData(principal, ids.id),
  },
  ({ data: { reservation: r, events, work, verdicts, hours, mayEnd, mayExtend } }) => {
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
          <Link href="/dashboard/reservations" className="hover:underline">
            Reservations
          </Link>
        </nav>
        <PageHeader
          title={`${r.node_count} × ${r.gpu_type} nodes`}
          description={`${formatDateTime(r.starts_at)} – ${formatDateTime(r.ends_at)} · reservation ${r.id.slice(0, 8)}`}
          actions={
            <div className="flex flex-wrap items-center gap-3">
              <ReservationStatus status={r.status} degraded={r.degraded} />
              {mayEnd ? <EndReservationButton action={endReservationAction} id={r.id} kind={mayEnd} /> : null}
              <AutoRefresh seconds={10} />
            </div>
          }
        />
        {r.degraded ? (
          <p role="status" className="mb-6 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-900 ring-1 ring-amber-200">
            <strong>Degraded:</strong> {r.degraded_reason}. A free node replaces each one as soon as there is one; the time a node is not
            held is not billed.
          </p>
        ) : null}
        <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
          <Stat label="Nodes held" value={`${r.node_ids.length} / ${r.node_count}`} />
          <Stat label="GPUs" value={r.gpu_count} hint="Count against your quota while active" />
          <Stat label="Length" value={hours >= 48 ? `${(hours / 24).toFixed(1)} days` : `${hours.toFixed(1)} h`} />
          <Stat
            label="Work inside"
            value={work.filter((w) => w.status === "running").length}
            hint={`${work.filter((w) => w.status !== "running").length} waiting for it`}
          />
        </div>
        <Card className="mt-6">
          <CardHeader title="Topology" description="Nodes in one cluster, one pod when possible, on the fewest racks." />
          <div className="px-5 pt-4">
            <TopologyLine topology={r.topology} />
          </div>
          {r.nodes.length ? <NodesByRack nodes={r.nodes} /> : <EmptyState title="No nodes held" />}
        </Card>
        <Card className="mt-6">
          <CardHeader
            title="Handed over clean"
            description="Before each node was yours it was wiped and attested with its TPM against the operator's policy; each verdict is signed."
          />
          <NodeVerdicts rows={verdicts} />
        </Card>
        <Card className="mt-6">
          <CardHeader
            title="Work inside"
            description="Jobs that name this reservation run only here; your other jobs may use its free GPUs too. Submit with it on the Jobs page."
          />
          {work.length === 0 ? (
            <EmptyState title="Nothing runs here yet" />
          ) : (
            <ul className="divide-y divide-slate-100">
              {work.map((j) => (
                <li key={j.id} className="flex items-center justify-between gap-3 px-5 py-3 text-sm">
                  <Link href={`/dashboard/jobs/${j.id}`} className="font-medium text-indigo-700 hover:underline">
                    {j.name}
                  </Link>
                  <span className="flex items-center gap-3 text-slate-500">
                    {j.gpu_count} GPU{j.gpu_count === 1 ? "" : "s"}
                    {j.named ? " · names it" : ""} <JobStatus status={j.status} />
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Card>
        {mayExtend ? (
          <Card className="mt-6">
            <CardHeader title="Extend" description="A later end, when its nodes are free for the extra time." />
            <ExtendReservationForm action={extendReservationAction} id={r.id} endsAt={r.ends_at} />
          </Card>
        ) : null}
        <Card className="mt-6">
          <CardHeader title="Event log" description="Every change, with who and why." />
          <ol className="divide-y divide-slate-100">
            {events.map((e, i) => (
              <li key={i} className="flex flex-wrap items-center justify-between gap-2 px-5 py-3 text-sm">
                <span>
                  <span className="font-medium text-slate-900">{e.kind.replace("_", " ")}</span>{" "}
                  <span className="text-slate-600">{e.message}</span> <span className="text-slate-500">· {e.actor}</span>
                </span>
                <time className="text-xs text-slate-500" dateTime={e.created_at}>
                  {formatDateTime(e.created_at)}
                </time>
              </li>
            ))}
          </ol>
        </Card>
      </>
    );
  },
);
