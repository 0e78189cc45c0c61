import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import type { GpuState } from "@/lib/fleet/gpu-state";

// A node's GPUs with their effective state (lib/fleet/gpu-state.ts), and the reservations that hold
// the node: the node page's two views of who may use its GPUs.

interface GpuRow {
  id: string;
  index: number;
  model: string | null;
  gpuType: string;
  uuid: string;
  memoryTotalMb: number;
  state: GpuState;
  health: { score: number };
  why: string;
  allocatedJob: { id: string; name: string } | null;
  allocatedReplica: { endpoint: { id: string; name: string } } | null;
  allocatedPod: { id: string; name: string } | null;
  /** what holds it outside GPUForge (a Slurm job the bridge reported) */
  foreignHolder?: string | null;
}

/** "3 held · 4 idle · 1 unhealthy": the node's GPUs by effective state. */
export function gpuStateCounts(gpus: Array<{ state: GpuState }>): string {
  const order = ["held", "idle", "reserved", "unavailable", "unhealthy", "missing"];
  const counts = new Map<string, number>();
  for (const g of gpus) counts.set(g.state.label, (counts.get(g.state.label) ?? 0) + 1);
  return (
    order
      .filter((l) => counts.get(l))
      .map((l) => `${counts.get(l)} ${l}`)
      .join(" · ") || "none"
  );
}

export function NodeGpusTable({ gpus }: { gpus: GpuRow[] }) {
  return (
    <Card className="mt-6">
      <CardHeader title="GPUs" description={`By what work can do with them now: ${gpuStateCounts(gpus)}.`} />
      {gpus.length === 0 ? (
        <EmptyState title="This node reported no GPUs" />
      ) : (
        <Table caption="GPUs">
          <thead className="bg-slate-50">
            <tr>
              <Th>#</Th>
              <Th>State</Th>
              <Th>Held by</Th>
              <Th>Model</Th>
              <Th>Memory</Th>
              <Th className="text-right">Health</Th>
              <Th>Why</Th>
              <Th>UUID</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {gpus.map((g) => (
              <tr key={g.id} data-testid={`gpu-row-${g.index}`} data-state={g.state.kind}>
                <Td className="tabular-nums">{g.index}</Td>
                <Td>
                  <span className="flex items-center gap-2">
                    <Badge tone={g.state.tone}>{g.state.label}</Badge>
                    <span className="text-xs text-slate-600">{g.state.kind === "held" ? "" : g.state.detail}</span>
                  </span>
                </Td>
                <Td className="text-xs">
                  {g.allocatedJob ? (
                    <Holder kind="job" href={`/admin/jobs/${g.allocatedJob.id}`} name={g.allocatedJob.name} detail={g.state.detail} />
                  ) : g.allocatedReplica ? (
                    <Holder
                      kind="endpoint"
                      href={`/admin/endpoints/${g.allocatedReplica.endpoint.id}`}
                      name={g.allocatedReplica.endpoint.name}
                      detail={g.state.detail}
                    />
                  ) : g.allocatedPod ? (
                    <Holder kind="pod" href={`/admin/pods/${g.allocatedPod.id}`} name={g.allocatedPod.name} detail={g.state.detail} />
                  ) : g.foreignHolder ? (
                    <span className="text-amber-800">{g.foreignHolder}</span>
                  ) : (
                    <span className="text-slate-500">—</span>
                  )}
                </Td>
                <Td>{g.model ?? g.gpuType}</Td>
                <Td className="tabular-nums">{Math.round(g.memoryTotalMb / 1024)} GiB</Td>
                <Td className="text-right tabular-nums">{g.health.score}</Td>
                <Td className="max-w-xs truncate text-xs text-slate-500">{g.why || "—"}</Td>
                <Td className="font-mono text-xs">{g.uuid}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Card>
  );
}

function Holder({ kind, href, name, detail }: { kind: string; href: string; name: string; detail: string }) {
  // the detail reads "Held by job x (Tenant); the node is draining …": what follows the name
  const rest = detail.slice(detail.indexOf(name) + name.length).trim();
  return (
    <span title={detail}>
      {kind}{" "}
      <Link className="text-indigo-700 underline" href={href}>
        {name}
      </Link>{" "}
      <span className="text-slate-500">{rest}</span>
    </span>
  );
}

export function NodeReservationsCard({
  reservations,
}: {
  reservations: Array<{
    reservationId: string;
    tenant: { id: string; name: string };
    status: string;
    nodeCount: number;
    startsAt: Date;
    endsAt: Date;
    active: boolean;
  }>;
}) {
  const now = reservations.find((r) => r.active);
  return (
    <Card className="mt-6" data-testid="node-reservations">
      <CardHeader
        title="Reservation"
        description={
          now
            ? `Reserved for ${now.tenant.name} until ${formatDateTime(now.endsAt)}: only its work starts on this node.`
            : reservations.length
              ? "Not reserved now; booked ahead as below."
              : "No reservation holds or books this node: any tenant's work may run here."
        }
      />
      {reservations.length ? (
        <Table caption="Reservations of this node">
          <thead className="bg-slate-50">
            <tr>
              <Th>Tenant</Th>
              <Th>Window (UTC)</Th>
              <Th>Nodes</Th>
              <Th>Status</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {reservations.map((r) => (
              <tr key={r.reservationId}>
                <Td>
                  <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/tenants/${r.tenant.id}`}>
                    {r.tenant.name}
                  </Link>
                </Td>
                <Td>
                  {formatDateTime(r.startsAt)} → {formatDateTime(r.endsAt)}
                </Td>
                <Td className="tabular-nums">{r.nodeCount}</Td>
                <Td>
                  <Badge tone={r.active ? "sky" : "neutral"}>{r.active ? "holding now" : r.status}</Badge>
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
    </Card>
  );
}
