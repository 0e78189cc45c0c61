import { pipelines } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { deleteSecret, putSecret } from "@/lib/secrets/secrets";

export const PUT = route(pipelines.putSecret, async ({ actor, params, body, reply }) => {
  const { created, secret } = await putSecret(actor, params.name, body.value, body.usable_by);
  return reply(created ? 201 : 200, {
    secret: {
      name: secret.name,
      usable_by: secret.usableBy as "tenant_admin" | "tenant_member",
      created_at: secret.createdAt.toISOString(),
      updated_at: secret.updatedAt.toISOString(),
    },
  });
});

export const DELETE = route(pipelines.deleteSecret, async ({ actor, params, send }) => {
  await deleteSecret(actor, params.name);
  return send(204);
});
