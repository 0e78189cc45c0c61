import { updateAlertRuleAction } from "@/app/_actions/alerts";
import { AlertsNav } from "@/components/alerts/alerts-nav";
import { RuleForm } from "@/components/forms/alert-forms";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { getAlertRuleOrThrow } from "@/lib/alerts/alert-rules";
import { clusterNames } from "@/lib/fleet/cluster-queries";
import { nullIfRefused } from "@/lib/errors";
import { page } from "@/lib/pages/page";
import { ruleTypeOptions } from "../rule-types";

export const metadata = { title: "Edit alert rule" };

export default page(
  {
    plane: "operator",
    path: "/admin/alerts/rules/[id]",
    ids: ["id"],
    load: async ({ ids }) => {
      const rule = await nullIfRefused(getAlertRuleOrThrow(ids.id));
      return rule && { rule, clusters: await clusterNames() };
    },
  },
  ({ data: { rule, clusters } }) => {
    return (
      <>
        <PageHeader title={rule.name} description={`${rule.firing} alert${rule.firing === 1 ? "" : "s"} of this rule firing now.`} />
        <AlertsNav current="/admin/alerts/rules" />
        <Card>
          <CardHeader title="Edit rule" description="The type of a rule is fixed; add another rule for another type." />
          <RuleForm
            action={updateAlertRuleAction}
            types={ruleTypeOptions}
            clusters={clusters.map((c) => ({ id: c.id, name: c.name }))}
            rule={{
              id: rule.id,
              name: rule.name,
              rule_type: rule.ruleType,
              cluster_id: rule.clusterId,
              threshold: rule.threshold,
              window_s: rule.windowS,
              occurrences: rule.occurrences,
              severity: rule.severity,
              enabled: rule.enabled,
              notify: rule.notify,
              auto_remediate: rule.autoRemediate,
            }}
          />
        </Card>
      </>
    );
  },
);
