import { createSilenceAction, endSilenceAction } from "@/app/_actions/alerts";
import { ALERT_TYPE_LABELS, alertTypeLabel } from "@/components/alerts/alert-badges";
import { AlertsNav } from "@/components/alerts/alerts-nav";
import { CreateSilenceForm, InlineAction } from "@/components/forms/alert-forms";
import { Badge, type Tone } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { listAlertRules } from "@/lib/alerts/alert-rules";
import { silenceState } from "@/lib/alerts/silence-match";
import { listSilences } from "@/lib/alerts/silences";
import { clusterNames } from "@/lib/fleet/cluster-queries";
import { nodeNames } from "@/lib/fleet/queries";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Silences" };

const stateTone: Record<string, Tone> = { active: "indigo", upcoming: "sky", expired: "neutral", ended: "neutral" };

export default page({ plane: "operator", path: "/admin/alerts/silences" }, async () => {
  const [silences, rules, clusters, nodes] = await Promise.all([
    listSilences({ includeFinishedDays: 7 }),
    listAlertRules(),
    clusterNames(),
    nodeNames(),
  ]);
  const now = new Date();
  return (
    <>
      <PageHeader
        title="Silences and maintenance windows"
        description="While one applies, matching alerts are still raised, listed and acted on (automatic quarantine included), but nobody is notified. Each ends by itself."
      />
      <AlertsNav current="/admin/alerts/silences" />
      <Card>
        <CardHeader title="Current, upcoming and last week's" />
        {silences.length === 0 ? (
          <EmptyState title="No silences">Silence an alert from its row, or schedule a maintenance window below.</EmptyState>
        ) : (
          <Table caption="Silences and maintenance windows">
            <thead className="bg-slate-50">
              <tr>
                <Th>Kind</Th>
                <Th>Covers</Th>
                <Th>Why</Th>
                <Th>From</Th>
                <Th>Until</Th>
                <Th>State</Th>
                <Th>
                  <span className="sr-only">Actions</span>
                </Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {silences.map((s) => {
                const state = silenceState(s, now);
                const covers = [
                  s.rule ? `rule “${s.rule.name}”` : null,
                  s.ruleType ? alertTypeLabel(s.ruleType) : null,
                  s.cluster ? `cluster ${s.cluster.name}` : null,
                  s.node ? `node ${s.node.hostname}` : null,
                  s.subjectId ? `${s.subjectType} ${s.subjectId.slice(0, 8)}` : null,
                ]
                  .filter(Boolean)
                  .join(" · ");
                return (
                  <tr key={s.id} data-testid="silence-row">
                    <Td>
                      <Badge tone={s.kind === "maintenance" ? "amber" : "neutral"}>
                        {s.kind === "maintenance" ? "maintenance" : "silence"}
                      </Badge>
                    </Td>
                    <Td wrap className="max-w-xs text-xs">
                      {covers}
                    </Td>
                    <Td wrap className="max-w-xs text-sm">
                      {s.reason}
                      <p className="text-xs text-slate-500">by {s.createdBy}</p>
                    </Td>
                    <Td>{formatDateTime(s.startsAt)}</Td>
                    <Td>{formatDateTime(s.endedAt ?? s.endsAt)}</Td>
                    <Td>
                      <Badge tone={stateTone[state] ?? "neutral"}>{state}</Badge>
                    </Td>
                    <Td className="text-right">
                      {state === "active" || state === "upcoming" ? (
                        <InlineAction action={endSilenceAction} fields={{ id: s.id }} label={state === "upcoming" ? "Cancel" : "End now"} />
                      ) : null}
                    </Td>
                  </tr>
                );
              })}
            </tbody>
          </Table>
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader
          title="New silence or maintenance window"
          description="A maintenance window covers a cluster or a node and may start later; a silence covers any rule, type, cluster or node and starts now unless given a start. Times are UTC."
        />
        <CreateSilenceForm
          action={createSilenceAction}
          rules={rules.map((r) => ({ id: r.id, name: r.name }))}
          clusters={clusters.map((c) => ({ id: c.id, name: c.name }))}
          nodes={nodes}
          types={Object.entries(ALERT_TYPE_LABELS)}
        />
      </Card>
    </>
  );
});
