import Link from "next/link";
import { createAlertRuleAction, toggleAlertRuleAction } from "@/app/_actions/alerts";
import { SeverityBadge } from "@/components/alerts/alert-badges";
import { AlertsNav } from "@/components/alerts/alerts-nav";
import { InlineAction, RuleForm } from "@/components/forms/alert-forms";
import { Badge } from "@/components/ui/badge";
import { buttonClass } from "@/components/ui/button";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { Table, Td, Th } from "@/components/ui/table";
import { listAlertRules } from "@/lib/alerts/alert-rules";
import { RULE_TYPE_SPECS, type RuleType } from "@/lib/alerts/rule-types";
import { clusterNames } from "@/lib/fleet/cluster-queries";
import { page } from "@/lib/pages/page";
import { describeKnobs, ruleTypeOptions } from "./rule-types";

export const metadata = { title: "Alert rules" };

export default page({ plane: "operator", path: "/admin/alerts/rules" }, async () => {
  const [rules, clusters] = await Promise.all([listAlertRules(), clusterNames()]);
  const clusterName = new Map(clusters.map((c) => [c.id, c.name]));
  return (
    <>
      <PageHeader
        title="Alert rules"
        description="What the platform watches, how loudly it speaks, and which hardware faults take a node out of service on their own."
      />
      <AlertsNav current="/admin/alerts/rules" />
      <Card>
        <CardHeader title="Rules" description="Disabled rules resolve their alerts at the next evaluation." />
        {rules.length === 0 ? (
          <EmptyState title="No rules">Add one below; nothing is watched until then.</EmptyState>
        ) : (
          <Table caption="Alert rules">
            <thead className="bg-slate-50">
              <tr>
                <Th>Rule</Th>
                <Th>Condition</Th>
                <Th>Scope</Th>
                <Th>Severity</Th>
                <Th>Behaviour</Th>
                <Th>Firing</Th>
                <Th>
                  <span className="sr-only">Actions</span>
                </Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rules.map((r) => (
                <tr key={r.id} className={r.enabled ? "" : "bg-slate-50/60 text-slate-500"}>
                  <Td wrap>
                    <Link href={`/admin/alerts/rules/${r.id}`} className="font-medium text-indigo-700 hover:underline">
                      {r.name}
                    </Link>
                    <p className="text-xs text-slate-500">{RULE_TYPE_SPECS[r.ruleType as RuleType]?.label ?? r.ruleType}</p>
                  </Td>
                  <Td className="text-xs">{describeKnobs(r)}</Td>
                  <Td>{r.clusterId ? (clusterName.get(r.clusterId) ?? "—") : "Whole fleet"}</Td>
                  <Td>
                    <SeverityBadge severity={r.severity} />
                  </Td>
                  <Td className="space-x-1">
                    {r.enabled ? <Badge tone="green">enabled</Badge> : <Badge>disabled</Badge>}
                    {r.notify ? <Badge tone="indigo">notifies</Badge> : null}
                    {r.autoRemediate ? <Badge tone="red">auto-quarantine</Badge> : null}
                  </Td>
                  <Td className="tabular-nums">{r.firing}</Td>
                  <Td className="text-right">
                    <span className="inline-flex items-center gap-2">
                      <Link href={`/admin/alerts/rules/${r.id}`} className={buttonClass("secondary", "sm")}>
                        Edit
                      </Link>
                      <InlineAction
                        action={toggleAlertRuleAction}
                        fields={{ id: r.id, enabled: String(!r.enabled) }}
                        label={r.enabled ? "Disable" : "Enable"}
                      />
                    </span>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      <Card className="mt-6">
        <CardHeader title="Add a rule" description="Fleet-wide or for one cluster. Omitted knobs take the type's defaults." />
        <RuleForm action={createAlertRuleAction} types={ruleTypeOptions} clusters={clusters.map((c) => ({ id: c.id, name: c.name }))} />
      </Card>
    </>
  );
});
