import Link from "next/link";
import { capturePolicyAction, createPolicyAction } from "@/app/_actions/handover";
import { CapturePolicyForm, CreatePolicyForm } from "@/components/forms/attestation-forms";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { capturableNodes } from "@/lib/attestation/capture-policy";
import { listPolicies } from "@/lib/attestation/policy-queries";
import { verdictJwks } from "@/lib/attestation/signing-key";
import { pool } from "@/lib/db/client";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Attestation policies" };

export default page(
  {
    plane: "operator",
    path: "/admin/attestation",
    load: async ({ principal }) => {
      const [policies, nodes, jwks] = await Promise.all([listPolicies(principal), capturableNodes(principal), verdictJwks(pool())]);
      return { policies, nodes: nodes.map((n) => ({ ...n, created_at: n.created_at.toISOString() })), keys: jwks.keys.map((k) => k.kid) };
    },
  },
  ({ data: { policies, nodes, keys } }) => (
    <>
      <PageHeader
        title="Attestation policies"
        description="The reference values a node's TPM evidence is compared with before it returns to service between tenants. A cluster names its policy; each change is a new version, and every verdict names the version it was judged by."
      />
      <Card>
        <CardHeader title={`Policies (${policies.length})`} />
        {policies.length === 0 ? (
          <EmptyState title="No policy yet">
            Capture one from a node you trust, below, or write one. Until a cluster names one, its nodes fail attestation.
          </EmptyState>
        ) : (
          <Table caption="Attestation policies">
            <thead className="bg-slate-50">
              <tr>
                <Th>Name</Th>
                <Th className="text-right">Version</Th>
                <Th>Requires</Th>
                <Th className="text-right">PCRs</Th>
                <Th className="text-right">Known events</Th>
                <Th>Clusters</Th>
                <Th>Changed</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {policies.map((p) => (
                <tr key={p.id} className="hover:bg-slate-50">
                  <Td>
                    <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/attestation/${p.id}`}>
                      {p.name}
                    </Link>
                    {p.description ? <p className="text-xs text-slate-500">{p.description}</p> : null}
                  </Td>
                  <Td className="text-right tabular-nums">v{p.version}</Td>
                  <Td>
                    <span className="flex flex-wrap gap-1">
                      <Badge tone="indigo">quote</Badge>
                      {(p.current.require ?? []).map((r) => (
                        <Badge key={r} tone="neutral">
                          {r.replace("_", " ")}
                        </Badge>
                      ))}
                    </span>
                  </Td>
                  <Td className="text-right tabular-nums">{Object.keys(p.current.pcrs ?? {}).length}</Td>
                  <Td className="text-right tabular-nums">{p.current.events?.length ?? "—"}</Td>
                  <Td className="text-sm">
                    {p.clusters.length ? p.clusters.map((c) => c.name).join(", ") : <span className="text-slate-500">none</span>}
                  </Td>
                  <Td className="text-xs text-slate-600">{formatDateTime(p.updated_at)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader
          title="Capture a policy from a node"
          description="Its latest evidence becomes the reference: the PCRs its boot log replays to and every event it measured. Only genuine evidence (its key, a fresh nonce, a log that replays) can be captured."
        />
        <CapturePolicyForm action={capturePolicyAction} nodes={nodes} />
      </Card>
      <Card className="mt-6">
        <CardHeader title="Write a policy" />
        <CreatePolicyForm action={createPolicyAction} />
      </Card>
      <Card className="mt-6">
        <CardHeader
          title="Signing keys"
          description="Verdicts are compact JWS signed with Ed25519. Every key that ever signed one stays in the key set, so a verdict signed before a rotation still verifies."
        />
        <div className="space-y-2 p-5 text-sm">
          {keys.length === 0 ? (
            <p className="text-slate-500">No signing key is configured (ATTESTATION_SIGNING_KEY): nodes cannot be attested.</p>
          ) : (
            <ul className="space-y-1">
              {keys.map((k, i) => (
                <li key={k} className="flex items-center gap-2">
                  <code className="font-mono text-xs">{k}</code>
                  {i === 0 ? <Badge tone="green">signing now</Badge> : <Badge tone="neutral">rotated out, still verifies</Badge>}
                </li>
              ))}
            </ul>
          )}
          <p className="text-xs text-slate-500">
            Published at{" "}
            <a className="text-indigo-700 underline" href="/api/attestation/keys">
              /api/attestation/keys
            </a>{" "}
            and on the public listener at /v1/attestation/keys.
          </p>
        </div>
      </Card>
    </>
  ),
);
