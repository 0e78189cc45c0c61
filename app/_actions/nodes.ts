"use server";
import { z } from "zod";
import { formText, serverAction } from "@/lib/auth/action";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { updateNodeBody } from "@/lib/fleet/node-schemas";

// In the console a lifecycle change always says why (the API keeps the reason optional for scripts).
const consoleChange = updateNodeBody.extend({
  reason: z.string({ error: "Say why, in a few words" }).trim().min(3, "Say why, in a few words").max(500),
});

export const changeNodeStatusAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), change: consoleChange }),
    fromForm: (f) => ({ id: formText(f, "id"), change: { status: formText(f, "status"), reason: formText(f, "reason") } }),
    access: ["operator"],
    revalidate: ["/admin", "/admin/clusters"],
  },
  async (actor, { id, change }) => {
    const node = await changeNodeStatus(actor, id, change.status, change.reason);
    if (node.status === "offline")
      return { message: `${node.hostname} is offline; it will return in ${node.statusBeforeOffline} on its next heartbeat.` };
    return { message: `${node.hostname} is now ${node.status}.` };
  },
);
