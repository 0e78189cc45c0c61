import { bmc } from "@/lib/api/contracts";
import { deleteBmc } from "@/lib/bmc/delete-bmc";
import { putBmc } from "@/lib/bmc/put-bmc";
import { getBmcOrThrow } from "@/lib/bmc/queries";
import { route } from "@/lib/http/route";

export const GET = route(bmc.getNodeBmc, async ({ principal, params, reply }) => reply(200, await getBmcOrThrow(principal, params.id)));

export const PUT = route(bmc.putNodeBmc, async ({ actor, params, body, reply }) => reply(200, (await putBmc(actor, params.id, body)).bmc));

export const DELETE = route(bmc.deleteNodeBmc, async ({ actor, params, send }) => {
  await deleteBmc(actor, params.id);
  return send(204);
});
