"use server";
import { formText, serverAction } from "@/lib/auth/action";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { updateNodeBody } from "@/lib/fleet/node-schemas";
import { z } from "zod";

export const changeNodeStatusAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), change: updateNodeBody }),
    fromForm: (f) => ({ id: formText(f, "id"), change: { status: formText(f, "status"), reason: formText(f, "reason") } }),
    allow: (p) => p.kind === "operator",
    revalidate: ["/admin", "/admin/clusters"],
  },
  async (actor, { id, change }) => {
    const node = await changeNodeStatus(actor, id, change.status, change.reason);
    if (node.status === "offline") return { message: `${node.hostname} is offline; it will return in ${node.statusBeforeOffline} on its next heartbeat.` };
    return { message: `${node.hostname} is now ${node.status}.` };
  },
);
