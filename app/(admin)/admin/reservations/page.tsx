import Link from "next/link";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { ReservationStatus } from "@/components/reservations/reservation-badges";
import { TenantFloor } from "@/components/reservations/tenant-floor";
import { ReservationTimeline, paletteFor, timelineWindow } from "@/components/reservations/timeline";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { fleetByTenant, reservationsBetween } from "@/lib/reservations/queries";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Reservations" };
const DAY = 86_400_000;

export default page({ plane: "operator", path: "/admin/reservations" }, async ({ principal: p }) => {
  const now = Date.now();
  const today = Math.floor(now / DAY) * DAY;
  const [rows, floor] = await Promise.all([reservationsBetween(p, new Date(today - 7 * DAY), new Date(today + 60 * DAY)), fleetByTenant()]);
  const colors = paletteFor([
    ...rows.map((r) => r.tenant_name),
    ...floor.flatMap((n) => [n.reserved_by, ...n.used_by].filter((t): t is string => Boolean(t))),
  ]);
  const active = rows.filter(
    (r) => (r.status === "confirmed" || r.status === "active") && Date.parse(r.starts_at) <= now && Date.parse(r.ends_at) > now,
  );
  return (
    <>
      <PageHeader
        title="Reservations"
        description="Every whole-node reservation on a timeline, and the fleet floor by tenant."
        actions={<AutoRefresh seconds={10} />}
      />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <Stat label="Active now" value={active.length} />
        <Stat label="Reserved nodes now" value={active.reduce((s, r) => s + r.node_ids.length, 0)} hint={`of ${floor.length} nodes`} />
        <Stat label="Reserved GPUs now" value={active.reduce((s, r) => s + r.gpu_count, 0)} />
        <Stat label="Degraded" value={rows.filter((r) => r.degraded).length} hint="A held node left service" />
      </div>
      <Card className="mt-6">
        <CardHeader title="Timeline" description="From yesterday on, up to two months ahead, coloured by tenant." />
        {rows.length === 0 ? (
          <EmptyState title="No reservations" />
        ) : (
          <ReservationTimeline
            caption="Every reservation on a timeline"
            {...timelineWindow(
              rows.map((r) => ({ endsAt: r.ends_at })),
              now,
            )}
            now={now}
            rows={rows.map((r) => ({
              id: r.id,
              label: r.tenant_name,
              sublabel: `${r.node_count} × ${r.gpu_type} · ${r.status}`,
              startsAt: r.starts_at,
              endsAt: r.ends_at,
              color: colors[r.tenant_name],
              muted: r.status !== "confirmed" && r.status !== "active",
              degraded: r.degraded,
            }))}
          />
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader
          title="Fleet floor by tenant"
          description="Who holds each node now, whose work runs on it, and which nodes a later reservation books."
        />
        <TenantFloor nodes={floor} colors={colors} />
      </Card>
      <Card className="mt-6">
        <CardHeader title="All reservations" />
        {rows.length === 0 ? (
          <EmptyState title="None" />
        ) : (
          <Table caption="Reservations">
            <thead className="bg-slate-50">
              <tr>
                <Th pin="left">Tenant</Th>
                <Th>Nodes</Th>
                <Th>Status</Th>
                <Th>From</Th>
                <Th>To</Th>
                <Th>Topology</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rows.map((r) => (
                <tr key={r.id}>
                  <Td className="font-medium" pin="left">
                    <Link className="text-indigo-700 hover:underline" href={`/admin/tenants/${r.tenant_id}`}>
                      {r.tenant_name}
                    </Link>{" "}
                    <span className="text-xs text-slate-500">{r.id.slice(0, 8)}</span>
                  </Td>
                  <Td>
                    {r.node_ids.length} / {r.node_count} × {r.gpu_type}
                  </Td>
                  <Td>
                    <ReservationStatus status={r.status} degraded={r.degraded} />
                  </Td>
                  <Td>{formatDateTime(r.starts_at)}</Td>
                  <Td>{formatDateTime(r.ends_at)}</Td>
                  {/* it wraps: a list of hostnames never runs off the card */}
                  <Td wrap className="min-w-56 max-w-md text-xs text-slate-600">
                    <span className="block font-medium text-slate-700">
                      {r.topology.pods} pod{r.topology.pods === 1 ? "" : "s"}, {r.topology.racks} rack{r.topology.racks === 1 ? "" : "s"}
                    </span>
                    <span className="mt-0.5 flex flex-wrap gap-x-2 gap-y-0.5 break-all">
                      {r.nodes
                        .filter((n) => n.state === "held")
                        .map((n) => (
                          <span key={n.hostname}>{n.hostname}</span>
                        ))}
                    </span>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
});
