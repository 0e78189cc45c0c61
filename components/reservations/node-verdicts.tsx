import { Badge } from "@/components/ui/badge";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import type { AttestationJson } from "@/lib/attestation/verdict-queries";

// A reservation's nodes with the signed verdict each was handed over with: the tenant's proof that
// the node was wiped and its measurements matched the operator's policy, checkable without
// trusting the platform (the JWS against the public key set).

export function NodeVerdicts({
  rows,
}: {
  rows: Array<{ nodeId: string; hostname: string; received: boolean; verdict: AttestationJson | null }>;
}) {
  return (
    <>
      <Table caption="Attestation of each node">
        <thead className="bg-slate-50">
          <tr>
            <Th>Node</Th>
            <Th>Verdict</Th>
            <Th>Policy</Th>
            <Th>Judged</Th>
            <Th>Signed verdict</Th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map((r) => (
            <tr key={r.nodeId} data-testid="node-verdict" data-result={r.verdict?.result ?? "none"}>
              <Td className="font-mono text-xs">{r.hostname}</Td>
              <Td>
                {!r.received ? (
                  <span className="text-slate-500">not yours yet</span>
                ) : r.verdict ? (
                  <span className="flex flex-wrap items-center gap-1.5">
                    <Badge tone={r.verdict.result === "pass" ? "green" : "red"}>{r.verdict.result}</Badge>
                    {r.verdict.tpm_kind === "simulated" ? <Badge tone="amber">simulated TPM</Badge> : null}
                    {r.verdict.failures.length ? (
                      <span className="text-xs text-red-700">{r.verdict.failures.map((f) => f.code).join(", ")}</span>
                    ) : null}
                  </span>
                ) : (
                  <span className="text-slate-500">not attested</span>
                )}
              </Td>
              <Td className="text-sm">{r.verdict?.policy ? `${r.verdict.policy} v${r.verdict.policy_version}` : "—"}</Td>
              <Td className="text-xs text-slate-600">{r.verdict ? formatDateTime(r.verdict.created_at) : "—"}</Td>
              <Td>
                {r.verdict ? (
                  <a
                    className="text-sm font-medium text-indigo-700 underline"
                    href={`data:application/jose;charset=utf-8,${encodeURIComponent(r.verdict.jws)}`}
                    download={`attestation-${r.hostname}-${r.verdict.id.slice(0, 8)}.jws`}
                  >
                    Download JWS<span className="sr-only"> of {r.hostname}</span>
                  </a>
                ) : null}
              </Td>
            </tr>
          ))}
        </tbody>
      </Table>
      <p className="px-5 py-3 text-xs text-slate-500">
        Check a verdict without trusting us:{" "}
        <code className="font-mono">npm run verify-attestation -- FILE --jwks https://…/v1/attestation/keys</code>, or any JOSE library
        (EdDSA, the key named by its kid).
      </p>
    </>
  );
}
