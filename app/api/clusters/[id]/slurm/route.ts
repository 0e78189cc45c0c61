import { slurm } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { getSlurmClusterOrThrow } from "@/lib/slurm/queries";
import { reportSlurmCluster } from "@/lib/slurm/report-cluster";

export const GET = route(slurm.getSlurmCluster, async ({ principal, params, reply }) =>
  reply(200, { slurm: await getSlurmClusterOrThrow(principal, params.id) }),
);

export const PUT = route(slurm.reportSlurmCluster, async ({ actor, params, body, reply }) =>
  reply(200, { slurm: (await reportSlurmCluster(actor, params.id, body))! }),
);
