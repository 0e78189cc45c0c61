import { Stat } from "@/components/ui/card";

/** "3 in jobs · 2 in endpoint replicas · 1 in pods · 16 on reserved nodes": what holds the GPUs, the parts of the total. */
function gpuHolders(by: { jobs: number; endpoint_replicas: number; pods: number; reserved: number }): string {
  const parts = [
    by.jobs ? `${by.jobs} in jobs` : null,
    by.endpoint_replicas ? `${by.endpoint_replicas} in endpoint replicas` : null,
    by.pods ? `${by.pods} in pods` : null,
    by.reserved ? `${by.reserved} on reserved nodes` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(" · ") : "Nothing holds a GPU now";
}

/**
 * "GPUs in use" as every tenant page shows it: everything that holds a GPU, as the quota counts it
 * (lib/tenants/queries.ts tenantFigures), against the quota, with the split beneath.
 */
export function GpusInUseStat({
  figures,
  quota,
  quotaWords = "your quota",
}: {
  figures: { gpu_in_use: number; gpu_in_use_by: { jobs: number; endpoint_replicas: number; pods: number; reserved: number } };
  quota: number;
  /** whose quota, on an operator's page: "its quota" */
  quotaWords?: string;
}) {
  return (
    <div data-testid="gpus-in-use" data-total={figures.gpu_in_use}>
      <Stat
        label="GPUs in use"
        value={`${figures.gpu_in_use} / ${quota}`}
        hint={`${gpuHolders(figures.gpu_in_use_by)} · against ${quotaWords}`}
      />
    </div>
  );
}
