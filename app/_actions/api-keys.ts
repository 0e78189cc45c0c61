"use server";
import { z } from "zod";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { createApiKeyBody } from "@/lib/api-keys/schemas";
import { formText, serverAction } from "@/lib/auth/action";

/** "30" / "90" / "365" days from now, a chosen date (end of that day, UTC), or never. */
function expiryFromForm(choice: string | undefined, date: string | undefined): string | undefined {
  if (!choice || choice === "never") return undefined;
  if (choice === "custom") return date && /^\d{4}-\d{2}-\d{2}$/.test(date) ? `${date}T23:59:59Z` : (date ?? "");
  const days = Number(choice);
  return Number.isFinite(days) ? new Date(Date.now() + days * 86_400_000).toISOString() : choice;
}

const pages = ["/admin/api-keys", "/dashboard/api-keys"];

export const createApiKeyAction = serverAction(
  {
    schema: createApiKeyBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      scope: formText(f, "scope"),
      tenant_id: formText(f, "scope") === "tenant" ? formText(f, "tenant_id") : undefined,
      cluster_id: formText(f, "scope") === "agent" ? formText(f, "cluster_id") : undefined,
      expires_at: expiryFromForm(formText(f, "expiry"), formText(f, "expires_on")),
      service_account_id: formText(f, "owner") === "me" ? undefined : formText(f, "owner"),
    }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, input) => {
    const { apiKey, key } = await createApiKey(actor, input);
    const until = apiKey.expiresAt ? ` It expires ${apiKey.expiresAt.toISOString().slice(0, 10)}.` : " It never expires.";
    return { message: `Key “${apiKey.name}” created. Copy it now: it is not shown again.${until}`, data: { key, prefix: apiKey.prefix } };
  },
);

export const revokeApiKeyAction = serverAction(
  {
    schema: z.object({ id: z.uuid() }),
    fromForm: (f) => ({ id: formText(f, "id") }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { id }) => {
    const key = await revokeApiKey(actor, id);
    return { message: `Key ${key.prefix}… revoked; it stops working immediately.` };
  },
);
