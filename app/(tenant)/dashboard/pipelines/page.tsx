import Link from "next/link";
import { deleteSecretAction, putSecretAction } from "@/app/_actions/pipelines";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { DeleteSecretButton, SecretForm } from "@/components/pipelines/pipeline-controls";
import { JobStatus } from "@/components/shell/jobs-table";
import { ButtonLink } from "@/components/ui/button";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { listPipelines } from "@/lib/pipelines/queries";
import { listSecrets } from "@/lib/secrets/secrets";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Pipelines" };

export default page({ plane: "tenant", path: "/dashboard/pipelines" }, async ({ principal: p }) => {
  const [pipelines, secrets] = await Promise.all([listPipelines(p), listSecrets(p)]);
  const admin = p.role === "tenant_admin";
  return (
    <>
      <PageHeader
        title="Pipelines"
        description="Agentic workflows: GPU jobs and tool calls (HTTP, your endpoints) that hand their outputs to later steps, loop until a condition holds, retry, and log every transition."
        actions={
          <div className="flex items-center gap-4">
            <AutoRefresh seconds={5} />
            <ButtonLink href="/dashboard/pipelines/new">New pipeline</ButtonLink>
          </div>
        }
      />
      <Card>
        <CardHeader title={`Pipelines (${pipelines.length})`} />
        {pipelines.length === 0 ? (
          <EmptyState title="No pipelines yet">
            <Link className="font-medium text-indigo-700 hover:underline" href="/dashboard/pipelines/new">
              Build one from a template
            </Link>
            , or send a spec to <code>POST /api/pipelines</code>.
          </EmptyState>
        ) : (
          <Table caption="Pipelines">
            <thead className="bg-slate-50">
              <tr>
                <Th>Name</Th>
                <Th>Status</Th>
                <Th>Steps</Th>
                <Th>Submitted</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {pipelines.map((pl) => (
                <tr key={pl.id}>
                  <Td>
                    <Link className="font-medium text-indigo-700 hover:underline" href={`/dashboard/pipelines/${pl.id}`}>
                      {pl.name}
                    </Link>
                  </Td>
                  <Td>
                    <JobStatus status={pl.status} />
                  </Td>
                  <Td>
                    {pl.steps.filter((s) => s.status === "completed").length} of {pl.steps.length} completed
                    {pl.steps.some((s) => s.status === "running")
                      ? ` · running ${pl.steps
                          .filter((s) => s.status === "running")
                          .map((s) => s.name)
                          .join(", ")}`
                      : ""}
                  </Td>
                  <Td>{formatRelative(pl.createdAt)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader
          title="Secrets for tool calls"
          description="http steps put them whole into a header, as ${secrets.NAME}, just before the request leaves: no expression sees a value, and no output, error or log carries one. Values are stored encrypted and never shown."
        />
        {secrets.length ? (
          <ul className="divide-y divide-slate-100">
            {secrets.map((s) => (
              <li key={s.name} className="flex items-center justify-between gap-4 px-5 py-2.5 text-sm">
                <span>
                  <code className="font-semibold">{s.name}</code>{" "}
                  <span className="text-xs text-slate-500">
                    {s.usableBy === "tenant_member" ? "every member" : "admins only"} · updated {formatRelative(s.updatedAt)}
                  </span>
                </span>
                {admin ? <DeleteSecretButton action={deleteSecretAction} name={s.name} /> : null}
              </li>
            ))}
          </ul>
        ) : (
          <p className="px-5 py-3 text-sm text-slate-500">No secrets yet.</p>
        )}
        {admin ? (
          <SecretForm action={putSecretAction} />
        ) : (
          <p className="px-5 pb-4 text-xs text-slate-500">Tenant admins manage secrets.</p>
        )}
      </Card>
    </>
  );
});
