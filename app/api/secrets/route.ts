import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listSecrets } from "@/lib/secrets/secrets";

export const GET = route(pipelines.listSecrets, async ({ principal, reply }) =>
  reply(200, {
    data: (await listSecrets(principal)).map((s) => ({
      name: s.name,
      usable_by: s.usableBy as "tenant_admin" | "tenant_member",
      created_at: s.createdAt.toISOString(),
      updated_at: s.updatedAt.toISOString(),
    })),
  }),
);
