"use server";
import { z } from "zod";
import { formText, serverAction } from "@/lib/auth/action";
import { updateDemoRequest } from "@/lib/marketing/site";
import { DEMO_REQUEST_STATUSES } from "@/lib/marketing/schemas";

export const updateDemoRequestAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), status: z.enum(DEMO_REQUEST_STATUSES) }),
    fromForm: (f) => ({ id: formText(f, "id"), status: formText(f, "status") }),
    access: ["operator"],
    revalidate: ["/admin/demo-requests", "/admin/analytics"],
  },
  async (actor, { id, status }) => {
    const r = await updateDemoRequest(actor, id, status);
    return { message: `${r.name}: ${r.status}.` };
  },
);
