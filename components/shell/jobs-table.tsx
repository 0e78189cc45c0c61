import Link from "next/link";
import { CancelJobButton, PriorityForm } from "@/components/forms/job-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import { Badge, type Tone } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";

export interface JobItem {
  id: string;
  name: string;
  tenant?: { id: string; name: string };
  status: string;
  gpuCount: number;
  gpuType: string;
  priority: number;
  pendingReason: string | null;
  submittedAt: string;
  submittedBy: string | null;
  nodes: Array<{ id: string; hostname: string }>;
  mayCancel: boolean;
}

const tones: Record<string, Tone> = {
  queued: "sky",
  blocked: "amber",
  running: "indigo",
  completed: "green",
  failed: "red",
  cancelled: "neutral",
};
export const JobStatus = ({ status }: { status: string }) => <Badge tone={tones[status] ?? "neutral"}>{status}</Badge>;

const WAITING = ["queued", "blocked"];

/**
 * Jobs as the queue (operators: tenants, nodes and priority linked and editable) or a tenant's list
 * (nodes by name, cancel where the viewer may). Filtering, sorting and paging live around it.
 */
export function JobsTable({
  jobs,
  plane,
  cancelAction,
  priorityAction,
  empty,
}: {
  jobs: JobItem[];
  plane: "admin" | "tenant";
  cancelAction?: FormAction;
  priorityAction?: FormAction;
  empty?: React.ReactNode;
}) {
  if (jobs.length === 0)
    return (
      <EmptyState title="No jobs match">{empty ?? "Submitted jobs appear here with their status and, while they wait, why."}</EmptyState>
    );
  const admin = plane === "admin";
  const href = admin ? "/admin/jobs" : "/dashboard/jobs";
  return (
    <Table caption="Jobs">
      <thead className="bg-slate-50">
        <tr>
          <Th pin="left">Job and status</Th>
          {admin ? <Th>Tenant</Th> : null}
          <Th>GPUs</Th>
          <Th className="text-right">Priority</Th>
          <Th>Nodes / why waiting</Th>
          <Th>Submitted</Th>
          {cancelAction ? (
            <Th className="text-right" pin="right">
              Actions
            </Th>
          ) : null}
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {jobs.map((j) => (
          <tr key={j.id} data-testid={`job-row-${j.name}`} className="align-top">
            <Td className="font-medium text-slate-900" pin="left">
              <Link className="text-indigo-700 hover:underline" href={`${href}/${j.id}`}>
                {j.name}
              </Link>
              {/* the status stays beside the name, in view however far a phone scrolls the row */}
              <span className="mt-1 block">
                <JobStatus status={j.status} />
              </span>
            </Td>
            {admin ? (
              <Td>
                {j.tenant ? (
                  <Link className="hover:underline" href={`/admin/tenants/${j.tenant.id}`}>
                    {j.tenant.name}
                  </Link>
                ) : (
                  "—"
                )}
              </Td>
            ) : null}
            <Td className="tabular-nums">
              {j.gpuCount} × {j.gpuType}
            </Td>
            <Td className="text-right tabular-nums">
              {admin && priorityAction && WAITING.includes(j.status) ? (
                <PriorityForm action={priorityAction} id={j.id} name={j.name} priority={j.priority} />
              ) : (
                j.priority
              )}
            </Td>
            <Td wrap className="max-w-sm text-xs text-slate-600">
              {WAITING.includes(j.status) ? (
                j.pendingReason
              ) : j.nodes.length ? (
                <span className="flex flex-wrap gap-x-2">
                  {j.nodes.map((n) =>
                    admin ? (
                      <Link key={n.id} className="text-indigo-700 hover:underline" href={`/admin/nodes/${n.id}`}>
                        {n.hostname}
                      </Link>
                    ) : (
                      <span key={n.id}>{n.hostname}</span>
                    ),
                  )}
                </span>
              ) : (
                "—"
              )}
            </Td>
            <Td>
              <span title={formatDateTime(j.submittedAt)}>{formatRelative(j.submittedAt)}</span>
              {j.submittedBy ? <p className="text-xs text-slate-500">by {j.submittedBy}</p> : null}
            </Td>
            {cancelAction ? (
              <Td className="text-right" pin="right">
                {[...WAITING, "running"].includes(j.status) ? (
                  j.mayCancel ? (
                    <CancelJobButton action={cancelAction} id={j.id} name={j.name} running={j.status === "running"} />
                  ) : (
                    <span className="text-xs text-slate-500" title="Members can cancel only the jobs they submitted">
                      not yours
                    </span>
                  )
                ) : null}
              </Td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

/** The list query's rows as table items; `mayCancel` is the viewer's right (lib/jobs/job-permissions.ts). */
export function toJobItems(
  rows: Array<{
    id: string;
    name: string;
    status: string;
    gpuCount: number;
    gpuType: string;
    priority: number;
    pendingReason: string | null;
    submittedAt: Date;
    tenantId: string;
    submittedBy: string | null;
    tenant: { name: string };
    submitter: { name: string; email: string } | null;
    nodes: Array<{ id: string; hostname: string }>;
  }>,
  mayCancel: (job: { tenantId: string; submittedBy: string | null }) => boolean,
): JobItem[] {
  return rows.map((j) => ({
    id: j.id,
    name: j.name,
    tenant: { id: j.tenantId, name: j.tenant.name },
    status: j.status,
    gpuCount: j.gpuCount,
    gpuType: j.gpuType,
    priority: j.priority,
    pendingReason: j.pendingReason,
    submittedAt: j.submittedAt.toISOString(),
    submittedBy: j.submitter?.name ?? null,
    nodes: j.nodes,
    mayCancel: mayCancel(j),
  }));
}
