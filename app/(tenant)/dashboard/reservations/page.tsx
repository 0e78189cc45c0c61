import Link from "next/link";
import { bookReservationAction } from "@/app/_actions/reservations";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { CapacityView } from "@/components/reservations/capacity-view";
import { ReservationStatus } from "@/components/reservations/reservation-badges";
import { BookReservationForm } from "@/components/reservations/reservation-forms";
import { ReservationTimeline, timelineWindow } from "@/components/reservations/timeline";
import { inputClass } from "@/components/forms/form-parts";
import { Button } from "@/components/ui/button";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { page } from "@/lib/pages/page";
import { reservationsPageData } from "@/lib/reservations/reservations-page";
import { GpusInUseStat } from "@/components/workloads/gpus-in-use";

export const metadata = { title: "Reservations" };

export default page(
  {
    plane: "tenant",
    path: "/dashboard/reservations",
    load: ({ principal, searchParams }) => reservationsPageData(principal, searchParams),
  },
  ({ data: { now, types, clusters, tenant, figures, gpuType, from, to, rows, capacity, live, activeNow, mayBook, pricing } }) => {
    return (
      <>
        <PageHeader
          title="Reservations"
          description="Whole nodes booked for a window: only your work runs on them, close together on the interconnect. Billed per second for the whole window, used or not."
          actions={<AutoRefresh seconds={10} />}
        />
        <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
          <Stat label="Active now" value={activeNow.length} hint={`${activeNow.reduce((s, r) => s + r.node_ids.length, 0)} nodes`} />
          <Stat label="Upcoming" value={live.length - activeNow.length} />
          <Stat
            label="Reserved GPUs now"
            value={activeNow.reduce((s, r) => s + r.gpu_count, 0)}
            hint="Count against your quota while active"
          />
          <GpusInUseStat figures={figures} quota={tenant.gpuQuota} />
        </div>

        <Card className="mt-6">
          <CardHeader title="Calendar" description="Your reservations from yesterday on, up to two months ahead." />
          {rows.length === 0 ? (
            <EmptyState title="No reservations yet">Book whole nodes below; they show up here.</EmptyState>
          ) : (
            <ReservationTimeline
              caption="Your reservations on a timeline"
              {...timelineWindow(
                rows.map((r) => ({ endsAt: r.ends_at })),
                now,
              )}
              now={now}
              rows={rows.map((r) => ({
                id: r.id,
                label: `${r.node_count} × ${r.gpu_type}`,
                sublabel: `${r.status} · ${r.id.slice(0, 8)}`,
                startsAt: r.starts_at,
                endsAt: r.ends_at,
                href: `/dashboard/reservations/${r.id}`,
                color: 0,
                muted: r.status !== "confirmed" && r.status !== "active",
                degraded: r.degraded,
              }))}
            />
          )}
        </Card>

        <Card className="mt-6">
          <CardHeader
            title="Free capacity"
            description={`Whole nodes and GPUs free from ${formatDateTime(new Date(from))} to ${formatDateTime(new Date(to))}, taking bookings, running work and unhealthy hardware into account.`}
          />
          <form method="get" className="grid gap-3 border-b border-slate-100 p-5 sm:grid-cols-4" aria-label="Check capacity">
            <label className="block text-sm font-medium text-slate-800">
              <span className="mb-1 block">GPU type</span>
              <select name="gpu_type" defaultValue={gpuType} className={inputClass}>
                {types.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
            </label>
            <label className="block text-sm font-medium text-slate-800">
              <span className="mb-1 block">From (UTC)</span>
              <input name="from" type="datetime-local" defaultValue={new Date(from).toISOString().slice(0, 16)} className={inputClass} />
            </label>
            <label className="block text-sm font-medium text-slate-800">
              <span className="mb-1 block">To (UTC)</span>
              <input name="to" type="datetime-local" defaultValue={new Date(to).toISOString().slice(0, 16)} className={inputClass} />
            </label>
            <div className="flex items-end">
              <Button type="submit" variant="secondary">
                Check
              </Button>
            </div>
          </form>
          {capacity ? <CapacityView report={capacity} /> : <EmptyState title="The fleet has no GPUs yet" />}
        </Card>

        {mayBook ? (
          <Card className="mt-6">
            <CardHeader
              title="Book nodes"
              description="Confirmed with concrete nodes at once, or refused with what is free and the earliest window that fits."
            />
            <BookReservationForm
              action={bookReservationAction}
              gpuTypes={types}
              clusters={clusters}
              defaults={{ gpuType, startsAt: new Date(from).toISOString(), endsAt: new Date(to).toISOString() }}
              pricing={pricing}
            />
          </Card>
        ) : null}

        <Card className="mt-6">
          <CardHeader title="All reservations" description="Newest first." />
          {rows.length === 0 ? (
            <EmptyState title="None yet" />
          ) : (
            <Table caption="Your reservations">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Reservation</Th>
                  <Th>Status</Th>
                  <Th>Nodes</Th>
                  <Th>From</Th>
                  <Th>To</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {[...rows]
                  .sort((a, b) => b.created_at.localeCompare(a.created_at))
                  .map((r) => (
                    <tr key={r.id}>
                      <Td>
                        <Link className="font-medium text-indigo-700 hover:underline" href={`/dashboard/reservations/${r.id}`}>
                          {r.node_count} × {r.gpu_type}
                        </Link>{" "}
                        <span className="text-xs text-slate-500">{r.id.slice(0, 8)}</span>
                      </Td>
                      <Td>
                        <ReservationStatus status={r.status} degraded={r.degraded} />
                      </Td>
                      <Td className="tabular-nums">
                        {r.node_ids.length} nodes · {r.gpu_count} GPUs · {r.topology.pods} pod(s), {r.topology.racks} rack(s)
                      </Td>
                      <Td>{formatDateTime(r.starts_at)}</Td>
                      <Td>{formatDateTime(r.ends_at)}</Td>
                    </tr>
                  ))}
              </tbody>
            </Table>
          )}
        </Card>
      </>
    );
  },
);
