import { randomBytes } from "node:crypto";
import pg from "pg";

// The public listener's database connection: a login role that is a member of
// gpuforge_public_reader (SELECT on the public_api views, created by the migrations) and nothing
// else. The listener checks that about its own role before it serves a request, so a
// misconfiguration (the app's URL pasted in, a role with grants of its own) stops it at start.

const READER_GROUP = "gpuforge_public_reader";
const READER_LOGIN = "gpuforge_public_api";

export function readerPool(url: string, max = 5): pg.Pool {
  // read-only transactions and a statement timeout, whatever the role's own settings say
  return new pg.Pool({ connectionString: url, max, options: "-c default_transaction_read_only=on -c statement_timeout=5000" });
}

/** Refuses (throws) unless the connection's role can read the public views and nothing else, and write nothing. */
export async function assertReadOnlyRole(pool: pg.Pool): Promise<void> {
  const {
    rows: [role],
  } = await pool.query<{ name: string; super: boolean; createrole: boolean; createdb: boolean; bypassrls: boolean }>(
    `SELECT rolname AS name, rolsuper AS super, rolcreaterole AS createrole, rolcreatedb AS createdb, rolbypassrls AS bypassrls FROM pg_roles WHERE rolname = current_user`,
  );
  if (!role) throw new Error("cannot read its own role");
  if (role.super || role.createrole || role.createdb || role.bypassrls) {
    throw new Error(
      `role ${role.name} is privileged (superuser, CREATEROLE, CREATEDB or BYPASSRLS); give the public API a plain login role granted only ${READER_GROUP}`,
    );
  }
  const { rows: reachable } = await pool.query<{ name: string; privilege: string }>(
    `SELECT n.nspname || '.' || c.relname AS name, p.privilege
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) AS p(privilege)
      WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
        AND NOT (n.nspname = 'public_api' AND p.privilege = 'SELECT')
        AND has_table_privilege(c.oid, p.privilege)`,
  );
  if (reachable.length) {
    throw new Error(
      `role ${role.name} may ${[...new Set(reachable.map((r) => r.privilege))].join("/")} ${reachable
        .slice(0, 5)
        .map((r) => r.name)
        .join(", ")}${reachable.length > 5 ? ", …" : ""}; give the public API a role granted only ${READER_GROUP}`,
    );
  }
  await pool.query("SELECT 1 FROM public_api.nodes LIMIT 1").catch((e: Error) => {
    throw new Error(`role ${role.name} cannot read the public views (${e.message}); grant it ${READER_GROUP}`);
  });
}

/**
 * With the embedded database (no PUBLIC_API_DATABASE_URL): makes sure a login role for the
 * listener exists, in the reader group only, read-only by default, with a fresh random password,
 * and returns a URL for it. Needs an administrator's connection; nothing else uses that one.
 */
export async function provisionReaderLogin(adminUrl: string): Promise<string> {
  const password = randomBytes(24).toString("base64url");
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [READER_GROUP]);
    if (!rows.length)
      throw new Error(`role ${READER_GROUP} does not exist: run the migrations as a role that may create roles, or create it (see README)`);
    const exists = (await admin.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [READER_LOGIN])).rows.length > 0;
    const quoted = `'${password}'`; // base64url: no quote can occur
    await admin.query(
      exists ? `ALTER ROLE ${READER_LOGIN} LOGIN PASSWORD ${quoted}` : `CREATE ROLE ${READER_LOGIN} LOGIN PASSWORD ${quoted}`,
    );
    await admin.query(`ALTER ROLE ${READER_LOGIN} NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS INHERIT`);
    await admin.query(`ALTER ROLE ${READER_LOGIN} SET default_transaction_read_only = on`);
    await admin.query(`GRANT ${READER_GROUP} TO ${READER_LOGIN}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.username = READER_LOGIN;
  url.password = password;
  return url.toString();
}
