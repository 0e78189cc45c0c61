// `npm run key -- create --scope operator --name NAME` (or --scope tenant --tenant ID,
// --scope agent --cluster ID [--node ID]) prints the new key as the last line of standard output.
// `npm run key -- list` and `npm run key -- revoke ID` manage existing keys. A key made here belongs
// to the platform service account "command line" (of its tenant, for tenant keys), or to the
// service account named with --service-account: admins see it there, and disabling the account
// revokes its keys.
import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { bundleSigningKey, installCommand } from "@/lib/agent-install/signing-key";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { listApiKeys } from "@/lib/api-keys/queries";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { createApiKeyBody } from "@/lib/api-keys/schemas";
import { systemActorFor } from "@/lib/auth/principal";
import { disconnectDb } from "@/lib/db/client";
import { parseEnv } from "@/lib/env";
import { isAppError } from "@/lib/errors";
import { repoRoot, withDatabaseUrl } from "./lib/database-url";
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
    if (apiKey.scope === "agent") {
      // the embedded demo's signing key, as `npm start` uses it (scripts/start.ts)
      const demoKey = path.join(repoRoot, ".data", "bundle-signing-key.pem");
      if (!process.env.BUNDLE_SIGNING_KEY && existsSync(demoKey)) process.env.BUNDLE_SIGNING_KEY_FILE ??= demoKey;
      const e = parseEnv(process.env);
      const signing = bundleSigningKey(e);
      console.error(
        signing
          ? `install on a node: ${installCommand(e.NEXTAUTH_URL ?? "https://CONTROL_PLANE", signing, "--key-file FILE_WITH_THE_KEY")}`
          : "no BUNDLE_SIGNING_KEY: nodes cannot install the agent until one is configured",
      );
    }
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
