"use server";
import { z } from "zod";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { createApiKeyBody } from "@/lib/api-keys/schemas";
import { formText, serverAction } from "@/lib/auth/action";
import type { Principal } from "@/lib/auth/principal";

const canManageKeys = (p: Principal) => p.kind === "operator" || (p.kind === "tenant" && p.role === "tenant_admin");
const pages = ["/admin/api-keys", "/dashboard/api-keys"];

export const createApiKeyAction = serverAction(
  {
    schema: createApiKeyBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      scope: formText(f, "scope"),
      tenant_id: formText(f, "scope") === "tenant" ? formText(f, "tenant_id") : undefined,
      cluster_id: formText(f, "scope") === "agent" ? formText(f, "cluster_id") : undefined,
    }),
    allow: canManageKeys,
    revalidate: pages,
  },
  async (actor, input) => {
    const { apiKey, key } = await createApiKey(actor, input);
    return { message: `Key “${apiKey.name}” created. Copy it now: it is not shown again.`, data: { key, prefix: apiKey.prefix } };
  },
);

export const revokeApiKeyAction = serverAction(
  { schema: z.object({ id: z.uuid() }), fromForm: (f) => ({ id: formText(f, "id") }), allow: canManageKeys, revalidate: pages },
  async (actor, { id }) => {
    const key = await revokeApiKey(actor, id);
    return { message: `Key ${key.prefix}… revoked; it stops working immediately.` };
  },
);
