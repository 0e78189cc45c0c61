import Link from "next/link";
import {
  saveBankDetailsAction,
  saveNotificationSettingsAction,
  saveRemediationSettingsAction,
  saveSelfServiceSettingsAction,
  saveTwoFactorPolicyAction,
  sendTestNotificationAction,
} from "@/app/_actions/settings";
import { SelfServiceSettingsForm, TwoFactorPolicyForm } from "@/components/forms/self-service-forms";
import { BankDetailsForm, NotificationSettingsForm, RemediationSettingsForm, SourceBadge } from "@/components/forms/settings-forms";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { settingsView } from "@/lib/settings/settings";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Settings" };

const DEPLOY_TIME: Array<[string, string]> = [
  ["Database", "Which PostgreSQL the control plane uses."],
  ["Sign-in secret and public address", "What signs session cookies, and the address links in emails point to."],
  ["Card payments (Stripe)", "The Stripe account and the signing secret of its webhook."],
  ["Background engine", "Whether durable background work runs on Inngest or in the app itself."],
  ["Encryption key for secrets", "What encrypts the email server and webhook addresses stored on this page."],
  ["Model server on GPU nodes", "The command each node's agent starts for an endpoint replica; set where the agent runs."],
];

export default page({ plane: "operator", path: "/admin/settings" }, async () => {
  const view = await settingsView();
  return (
    <>
      <PageHeader
        title="Settings"
        description="How the platform reaches you and how far it acts on its own. Values set here apply at once on every instance and override the deployment's configuration, which stays the default."
      />
      {view.updatedAt ? (
        <p className="-mt-3 mb-6 text-xs text-slate-500">
          Last changed {formatDateTime(view.updatedAt)} by {view.updatedBy}.
        </p>
      ) : null}
      {!view.encryption ? (
        <p role="status" className="mb-6 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-900 ring-1 ring-amber-200">
          This installation has no key to encrypt secrets with, so email server and webhook addresses can only be set at deploy time.{" "}
          <Link className="font-medium underline" href="/docs/self-hosting#settings">
            How to add one
          </Link>
        </p>
      ) : null}
      <Card id="notifications">
        <CardHeader
          title="Notification channels"
          description="Alerts and demo requests are sent by email and/or to a webhook; with neither, they are only listed under Alerts → Notifications. Secrets are stored encrypted and never shown again."
          actions={
            <div className="flex gap-2">
              <span className="text-xs text-slate-500">Email</span>
              <SourceBadge source={view.smtp.source} />
              <span className="text-xs text-slate-500">Webhook</span>
              <SourceBadge source={view.webhook.source} />
            </div>
          }
        />
        <NotificationSettingsForm action={saveNotificationSettingsAction} testAction={sendTestNotificationAction} view={view} />
      </Card>
      <Card className="mt-6" id="remediation">
        <CardHeader
          title="Automatic remediation"
          description="A fatal XID or repeated overheating quarantines its node automatically, at most this many times per window across the fleet; past the cap a critical alert asks a person instead."
          actions={<SourceBadge source={view.cap.source} />}
        />
        <RemediationSettingsForm
          action={saveRemediationSettingsAction}
          cap={view.cap.value}
          windowS={view.windowS.value}
          source={view.cap.source}
        />
      </Card>
      <Card className="mt-6" id="payments">
        <CardHeader title="Payments" description="How tenants pay invoices and add funds." />
        <div className="flex flex-wrap items-center gap-3 border-b border-slate-100 px-5 py-4 text-sm">
          <span className="font-medium text-slate-900">Card payments</span>
          {view.stripe ? <Badge tone="green">on, through Stripe</Badge> : <Badge tone="neutral">off</Badge>}
          <span className="text-slate-600">
            {view.stripe
              ? "Invoices carry a card payment link and prepaid tenants can add funds by card."
              : "Tenants pay from their balance or by bank transfer, which you record on the invoice."}{" "}
            The Stripe account is set at deploy time.{" "}
            <Link className="font-medium text-indigo-700 hover:underline" href="/docs/self-hosting#payments">
              Self-hosting guide
            </Link>
          </span>
        </div>
        <p className="px-5 pt-4 text-sm text-slate-600">
          Bank details for transfers, shown to tenants on every pending invoice and on the prepaid balance page, with a payment reference.
        </p>
        <BankDetailsForm action={saveBankDetailsAction} bank={view.bank.value} />
      </Card>
      <Card className="mt-6" id="self-service">
        <CardHeader
          title="Self-service sign-up"
          description="Strangers become paying tenants on their own: a prepaid account with these limits, usable once its email address is confirmed, funded by card. They appear under Tenants as sign-ups."
          actions={<SourceBadge source={view.signup.source} />}
        />
        <SelfServiceSettingsForm action={saveSelfServiceSettingsAction} enabled={view.signup.enabled} defaults={view.signup.defaults} />
      </Card>
      <Card className="mt-6" id="sign-in-security">
        <CardHeader title="Sign-in security" description="Who must sign in with a code from an authenticator app besides the password." />
        <TwoFactorPolicyForm action={saveTwoFactorPolicyAction} policy={view.twoFactor} />
      </Card>
      <Card className="mt-6" id="deploy-time">
        <CardHeader
          title="Set at deploy time"
          description="These are part of how the platform is installed and change only with a restart."
        />
        <ul className="divide-y divide-slate-100">
          {DEPLOY_TIME.map(([what, why]) => (
            <li key={what} className="flex flex-wrap items-baseline justify-between gap-2 px-5 py-3 text-sm">
              <span className="font-medium text-slate-900">{what}</span>
              <span className="text-slate-600">{why}</span>
            </li>
          ))}
        </ul>
        <p className="border-t border-slate-100 px-5 py-3 text-sm">
          <Link className="font-medium text-indigo-700 hover:underline" href="/docs/self-hosting">
            Self-hosting guide: every deploy-time setting →
          </Link>
        </p>
      </Card>
    </>
  );
});
