import {
  beginTwoFactorAction,
  changePasswordAction,
  confirmTwoFactorAction,
  disableTwoFactorAction,
  regenerateRecoveryCodesAction,
} from "@/app/_actions/accounts";
import { ChangePasswordForm, DisableTwoFactorForm, RegenerateCodesForm, TwoFactorSetup } from "@/components/forms/account-forms";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import type { accountPage } from "@/lib/accounts/account-page";

const OUTCOMES: Record<string, { label: string; tone: "green" | "amber" | "red" | "neutral" }> = {
  succeeded: { label: "Signed in", tone: "green" },
  wrong_password: { label: "Wrong password", tone: "red" },
  wrong_code: { label: "Wrong code", tone: "red" },
  throttled: { label: "Held back (too many tries)", tone: "amber" },
  unverified: { label: "Address not confirmed", tone: "amber" },
  disabled: { label: "Account disabled", tone: "neutral" },
};
const METHODS: Record<string, string> = { password: "password", totp: "password + app code", recovery_code: "password + recovery code" };

/** Account → security, the same for operators and tenant users: password, two-factor sign-in, sign-in history. */
export function AccountSecurity({ view }: { view: Awaited<ReturnType<typeof accountPage>> }) {
  const { user, twoFactor, pending, signIns, mustEnrol } = view;
  return (
    <>
      <PageHeader title="Account" description={`${user.email} · member since ${formatDateTime(user.createdAt)}`} />
      {mustEnrol ? (
        <p role="alert" className="mb-6 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-900 ring-1 ring-amber-200">
          Your operators require two-factor sign-in for your role. Set it up below to continue to the console.
        </p>
      ) : null}
      <Card id="two-factor" className="mb-6">
        <CardHeader
          title="Two-factor sign-in"
          description="A code from an authenticator app at every sign-in, besides your password."
          actions={
            twoFactor.enabledAt ? (
              <Badge tone="green">on since {formatDateTime(twoFactor.enabledAt)}</Badge>
            ) : (
              <Badge tone={twoFactor.required ? "amber" : "neutral"}>{twoFactor.required ? "required — off" : "off"}</Badge>
            )
          }
        />
        {twoFactor.enabledAt ? (
          <>
            <p className="px-5 pt-4 text-sm text-slate-600">
              {twoFactor.recoveryCodesLeft} of 10 recovery codes left.
              {twoFactor.recoveryCodesLeft <= 3 ? " Make new ones before you run out." : ""}
            </p>
            <RegenerateCodesForm action={regenerateRecoveryCodesAction} />
            <div className="border-t border-slate-100 pt-4">
              <h3 className="px-5 pb-2 text-sm font-semibold text-slate-900">Turn off</h3>
              <DisableTwoFactorForm action={disableTwoFactorAction} required={twoFactor.required} />
            </div>
          </>
        ) : (
          <TwoFactorSetup begin={beginTwoFactorAction} confirm={confirmTwoFactorAction} pending={pending} />
        )}
      </Card>
      <Card id="password" className="mb-6">
        <CardHeader title="Password" description="Changing it signs out every browser, this one too. API keys keep working." />
        <ChangePasswordForm action={changePasswordAction} minLength={view.passwordMinLength} />
      </Card>
      <Card id="sign-ins">
        <CardHeader
          title="Recent sign-ins"
          description="Every attempt to sign in to this account, kept 90 days. Anything you do not recognise: change your password."
        />
        {signIns.length === 0 ? (
          <EmptyState title="No sign-ins recorded yet" />
        ) : (
          <Table caption="Recent sign-ins">
            <thead className="bg-slate-50">
              <tr>
                <Th>When</Th>
                <Th>Outcome</Th>
                <Th>From</Th>
                <Th>Browser</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {signIns.map((e) => (
                <tr key={e.id}>
                  <Td>{formatDateTime(e.at)}</Td>
                  <Td>
                    <Badge tone={OUTCOMES[e.outcome]?.tone ?? "neutral"}>{OUTCOMES[e.outcome]?.label ?? e.outcome}</Badge>
                    {e.method ? <span className="ml-2 text-xs text-slate-500">{METHODS[e.method]}</span> : null}
                  </Td>
                  <Td className="font-mono text-xs">{e.address}</Td>
                  <Td className="max-w-xs truncate text-xs text-slate-600">
                    <span title={e.user_agent ?? undefined}>{e.user_agent ?? "—"}</span>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
}
