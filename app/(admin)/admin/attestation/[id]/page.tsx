import Link from "next/link";
import { newPolicyVersionAction } from "@/app/_actions/handover";
import { NewPolicyVersionForm } from "@/components/forms/attestation-forms";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { getPolicyOrThrow } from "@/lib/attestation/policy-queries";
import { nullIfRefused } from "@/lib/errors";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Attestation policy" };

export default page(
  {
    plane: "operator",
    path: "/admin/attestation/[id]",
    ids: ["id"],
    load: ({ principal, ids }) => nullIfRefused(getPolicyOrThrow(principal, ids.id)),
  },
  ({ data: p }) => {
    const { version: _v, created_at: _c, created_by: _b, ...sections } = p.current;
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
          <Link href="/admin/attestation" className="hover:underline">
            Attestation policies
          </Link>
        </nav>
        <PageHeader
          title={p.name}
          description={`${p.description ? `${p.description} · ` : ""}version ${p.version} · used by ${p.clusters.length ? p.clusters.map((c) => c.name).join(", ") : "no cluster"}`}
        />
        <div className="grid gap-6 lg:grid-cols-2">
          <Card>
            <CardHeader title="Reference PCRs" description={`Bank ${p.current.pcr_bank}. The quote must cover each, with this value.`} />
            <Table caption="Reference PCR values">
              <thead className="bg-slate-50">
                <tr>
                  <Th>PCR</Th>
                  <Th>Expected digest</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {Object.entries(p.current.pcrs).map(([pcr, d]) => (
                  <tr key={pcr}>
                    <Td className="tabular-nums">{pcr}</Td>
                    <Td className="font-mono text-xs">{d}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          </Card>
          <Card>
            <CardHeader title="What it requires" />
            <div className="space-y-3 p-5 text-sm">
              <p className="flex flex-wrap gap-1.5">
                <Badge tone="indigo">TPM quote</Badge>
                {p.current.require.map((r) => (
                  <Badge key={r} tone="neutral">
                    {r.replace("_", " ")}
                  </Badge>
                ))}
              </p>
              {p.current.gpu ? (
                <p className="text-slate-700">
                  GPUs may run driver {p.current.gpu.driver_versions.join(", ")}
                  {p.current.gpu.vbios_versions ? `, VBIOS ${p.current.gpu.vbios_versions.join(", ")}` : ""}. These are the agent's reports
                  (nvidia-smi), not hardware-signed: NVIDIA's attestation service is not consulted.
                </p>
              ) : null}
              {p.current.images?.length ? (
                <p className="text-slate-700">Reference for nodes provisioned with {p.current.images.join(", ")}.</p>
              ) : null}
            </div>
          </Card>
        </div>
        {p.current.events?.length ? (
          <Card className="mt-6">
            <CardHeader
              title={`Known boot events (${p.current.events.length})`}
              description="Every measured event of a node's boot log must be one of these."
            />
            <Table caption="Known boot events">
              <thead className="bg-slate-50">
                <tr>
                  <Th>PCR</Th>
                  <Th>Type</Th>
                  <Th>Digest</Th>
                  <Th>Description</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {p.current.events.map((e, i) => (
                  <tr key={i}>
                    <Td className="tabular-nums">{e.pcr}</Td>
                    <Td className="text-xs">{e.type ?? "—"}</Td>
                    <Td className="font-mono text-xs">{e.digest.slice(0, 16)}…</Td>
                    <Td className="max-w-xs truncate text-xs text-slate-500">{e.description ?? ""}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          </Card>
        ) : null}
        <Card className="mt-6">
          <CardHeader
            title="New version"
            description="Every section again: a version is whole. Earlier versions stay, and the verdicts judged by them keep naming them."
          />
          <NewPolicyVersionForm
            action={newPolicyVersionAction}
            id={p.id}
            current={JSON.stringify(sections, null, 2)}
            description={p.description}
          />
        </Card>
        <Card className="mt-6">
          <CardHeader title="Versions" />
          <ol className="divide-y divide-slate-100">
            {(p.versions ?? []).map((v) => (
              <li key={v.version} className="flex items-center justify-between gap-3 px-5 py-3 text-sm">
                <span>
                  <span className="font-medium">v{v.version}</span>{" "}
                  <span className="text-slate-500">
                    · {Object.keys(v.pcrs ?? {}).length} PCRs · {v.events?.length ?? 0} events · by {v.created_by}
                  </span>
                  {v.version === p.version ? (
                    <>
                      {" "}
                      <Badge tone="green">in force</Badge>
                    </>
                  ) : null}
                </span>
                <time className="text-xs text-slate-500" dateTime={v.created_at}>
                  {formatDateTime(v.created_at)}
                </time>
              </li>
            ))}
          </ol>
        </Card>
      </>
    );
  },
);
