"use server";
import { formText, serverAction } from "@/lib/auth/action";
import { createClusterBody } from "@/lib/fleet/cluster-schemas";
import { createCluster } from "@/lib/fleet/create-cluster";

export const createClusterAction = serverAction(
  {
    schema: createClusterBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      region: formText(f, "region") ?? null,
      provider: formText(f, "provider") ?? null,
      kind: formText(f, "kind") ?? "gpu",
    }),
    access: ["operator"],
    revalidate: ["/admin/clusters", "/admin"],
  },
  async (actor, input) => {
    const cluster = await createCluster(actor, input);
    return {
      message:
        cluster.kind === "slurm"
          ? `Slurm cluster “${cluster.name}” registered. Create an agent key for it and start its Slurm bridge (npm run slurm-bridge).`
          : `Cluster “${cluster.name}” registered. Create an agent key for its nodes.`,
    };
  },
);
