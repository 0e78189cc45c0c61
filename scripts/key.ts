// `npm run key -- create --scope operator --name NAME` (or --scope tenant --tenant ID,
// --scope agent --cluster ID [--node ID]) prints the new key as the last line of standard output.
// `npm run key -- list` and `npm run key -- revoke ID` manage existing keys. A key made here belongs
// to the platform service account "command line" (of its tenant, for tenant keys), or to the
// service account named with --service-account: admins see it there, and disabling the account
// revokes its keys.
import { parseArgs } from "node:util";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { listApiKeys } from "@/lib/api-keys/queries";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { createApiKeyBody } from "@/lib/api-keys/schemas";
import { systemActorFor } from "@/lib/auth/principal";
import { disconnectDb } from "@/lib/db/client";
import { isAppError } from "@/lib/errors";
import { withDatabaseUrl } from "./lib/database-url";
import { runMigrations } from "./lib/run-migrations";

const USAGE = `usage:
  npm run key -- create --scope operator|tenant|agent --name NAME [--tenant ID] [--cluster ID [--node ID]] [--service-account ID]
  npm run key -- list
  npm run key -- revoke KEY_ID`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    scope: { type: "string" },
    name: { type: "string" },
    tenant: { type: "string" },
    cluster: { type: "string" },
    node: { type: "string" },
    "service-account": { type: "string" },
  },
});

const systemActor = systemActorFor("command line");

async function main(url: string) {
  await runMigrations(url);
  process.env.DATABASE_URL = url;
  const [command, arg] = positionals;
  if (command === "create") {
    const input = createApiKeyBody.safeParse({
      name: values.name,
      scope: values.scope,
      tenant_id: values.tenant,
      cluster_id: values.cluster,
      node_id: values.node,
      service_account_id: values["service-account"],
    });
    if (!input.success) {
      for (const i of input.error.issues) console.error(`--${String(i.path[0]).replace("_id", "")}: ${i.message}`);
      throw new Error(USAGE);
    }
    const { apiKey, key } = await createApiKey(systemActor, input.data);
    console.error(`created ${apiKey.scope} key ${apiKey.prefix}… (${apiKey.id}); store it now, it is not shown again`);
    console.log(key);
  } else if (command === "list") {
    const { data } = await listApiKeys(systemActor.principal, { limit: 500 });
    for (const k of data) console.log(`${k.id}  ${k.prefix}…  ${k.scope.padEnd(8)}  ${k.name}`);
  } else if (command === "revoke" && arg) {
    const k = await revokeApiKey(systemActor, arg);
    console.log(`revoked ${k.prefix}…`);
  } else {
    throw new Error(USAGE);
  }
}

await withDatabaseUrl(async (url) => {
  try {
    await main(url);
  } finally {
    await disconnectDb();
  }
}).catch((e: unknown) => {
  console.error(
    isAppError(e)
      ? `${e.code}: ${e.message} ${e.details.map((d) => `${d.path}: ${d.message}`).join("; ")}`
      : e instanceof Error
        ? e.message
        : String(e),
  );
  process.exit(1);
});
