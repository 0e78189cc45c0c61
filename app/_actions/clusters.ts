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
    }),
    access: ["operator"],
    revalidate: ["/admin/clusters", "/admin"],
  },
  async (actor, input) => {
    const cluster = await createCluster(actor, input);
    return { message: `Cluster “${cluster.name}” registered. Create an agent key for its nodes.` };
  },
);
