import Link from "next/link";
import { createPipelineAction } from "@/app/_actions/pipelines";
import { PipelineEditor } from "@/components/pipelines/pipeline-editor";
import { Card, PageHeader } from "@/components/ui/card";
import { env } from "@/lib/env";
import { tenantEndpointNames } from "@/lib/endpoints/list-endpoint-names";
import { fleetGpuTypes } from "@/lib/jobs/queries";
import { listSecrets } from "@/lib/secrets/secrets";
import { page } from "@/lib/pages/page";

export const metadata = { title: "New pipeline" };

export default page({ plane: "tenant", path: "/dashboard/pipelines/new" }, async ({ principal: p }) => {
  const [gpuTypes, endpoints, secrets] = await Promise.all([fleetGpuTypes(), tenantEndpointNames(p), listSecrets(p)]);
  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
        <Link href="/dashboard/pipelines" className="hover:underline">
          Pipelines
        </Link>
      </nav>
      <PageHeader
        title="New pipeline"
        description="Steps run GPU jobs, call allow-listed HTTP tools or your endpoints, hand their outputs to later steps, and loop until a condition holds."
      />
      <Card>
        <PipelineEditor
          action={createPipelineAction}
          gpuTypes={gpuTypes}
          endpoints={endpoints}
          secrets={secrets.map((s) => s.name)}
          usableSecrets={secrets.filter((s) => p.role === "tenant_admin" || s.usableBy === "tenant_member").map((s) => s.name)}
          allowedHosts={env().TOOL_CALL_ALLOWED_HOSTS}
        />
      </Card>
    </>
  );
});
