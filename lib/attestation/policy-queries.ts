import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { run, runOne, type RowOf, type Runner } from "@/lib/db/statement";
import { notFound } from "@/lib/errors";
import { policyBodySchema } from "./policy";
import { GET_POLICY, LIST_POLICIES, POLICY_CLUSTERS, POLICY_VERSIONS } from "./statements";

type PolicyRow = RowOf<typeof GET_POLICY>;

/** A stored version's sections as the API shows them (a stored body that no longer parses is shown as stored). */
function sections(body: unknown, version: number, at: Date, by: string) {
  const parsed = policyBodySchema.safeParse(body);
  const b = (parsed.success ? parsed.data : body) as Record<string, unknown>;
  return { version, created_at: at.toISOString(), created_by: by, ...b } as ReturnType<typeof policyBodySchema.parse> & {
    version: number;
    created_at: string;
    created_by: string;
  };
}

function policyJson(r: PolicyRow, clusters: Array<{ id: string; name: string }>, versions?: Array<RowOf<typeof POLICY_VERSIONS>>) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    version: r.current_version,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    current: sections(r.body, r.current_version, r.version_created_at, r.version_created_by),
    ...(versions ? { versions: versions.map((v) => sections(v.body, v.version, v.created_at, v.created_by)) } : {}),
    clusters,
  };
}
export type PolicyJson = ReturnType<typeof policyJson>;

async function clustersOf(client: Runner, ids: string[]) {
  const rows = ids.length ? await run(client, POLICY_CLUSTERS, [ids]) : [];
  return (id: string) => rows.filter((r) => r.policy_id === id).map((r) => ({ id: r.id, name: r.name }));
}

export async function listPolicies(p: Principal): Promise<PolicyJson[]> {
  assertOperator(p);
  const rows = await run(db(), LIST_POLICIES, [500]);
  const of = await clustersOf(
    db(),
    rows.map((r) => r.id),
  );
  return rows.map((r) => policyJson(r, of(r.id)));
}

export async function getPolicyOrThrow(p: Principal, id: string, client: Runner = db()): Promise<PolicyJson> {
  assertOperator(p);
  const row = await runOne(client, GET_POLICY, [id]);
  if (!row) throw notFound("Attestation policy");
  const of = await clustersOf(client, [id]);
  return policyJson(row, of(id), await run(client, POLICY_VERSIONS, [id]));
}
