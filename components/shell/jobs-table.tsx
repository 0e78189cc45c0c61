import Link from "next/link";
import { CancelJobButton } from "@/components/forms/job-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import { Badge, type Tone } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";

export interface JobItem {
  id: string;
  name: string;
  tenant?: string;
  status: string;
  gpuCount: number;
  gpuType: string;
  priority: number;
  pendingReason: string | null;
  submittedAt: string;
}

const tones: Record<string, Tone> = { queued: "sky", blocked: "amber", running: "indigo", completed: "green", failed: "red", cancelled: "neutral" };
export const JobStatus = ({ status }: { status: string }) => <Badge tone={tones[status] ?? "neutral"}>{status}</Badge>;

export function JobsTable({ jobs, hrefBase, cancelAction, showTenant = false }: { jobs: JobItem[]; hrefBase?: string; cancelAction?: FormAction; showTenant?: boolean }) {
  if (jobs.length === 0) return <EmptyState title="No jobs here">Submitted jobs appear here with their status and, while they wait, why.</EmptyState>;
  return (
    <Table caption="Jobs">
      <thead className="bg-slate-50">
        <tr>
          <Th>Name</Th>
          {showTenant ? <Th>Tenant</Th> : null}
          <Th>Status</Th>
          <Th>GPUs</Th>
          <Th className="text-right">Priority</Th>
          <Th>Why pending</Th>
          <Th>Submitted</Th>
          {cancelAction ? <Th className="text-right">Actions</Th> : null}
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {jobs.map((j) => (
          <tr key={j.id} data-testid={`job-row-${j.name}`}>
            <Td className="font-medium text-slate-900">{hrefBase ? <Link className="text-indigo-700 hover:underline" href={`${hrefBase}/${j.id}`}>{j.name}</Link> : j.name}</Td>
            {showTenant ? <Td>{j.tenant}</Td> : null}
            <Td><JobStatus status={j.status} /></Td>
            <Td className="tabular-nums">{j.gpuCount} × {j.gpuType}</Td>
            <Td className="text-right tabular-nums">{j.priority}</Td>
            <Td wrap className="max-w-sm text-xs text-slate-600">{j.status === "queued" || j.status === "blocked" ? j.pendingReason : "—"}</Td>
            <Td>{formatRelative(j.submittedAt)}</Td>
            {cancelAction ? <Td className="text-right">{["queued", "blocked", "running"].includes(j.status) ? <CancelJobButton action={cancelAction} id={j.id} name={j.name} /> : null}</Td> : null}
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
