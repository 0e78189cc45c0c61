import Link from "next/link";
import { discardSignupAction, verifyEmailAction } from "@/app/_actions/accounts";
import { TokenActionForm, VerifyEmailForm } from "@/components/forms/account-forms";
import { AuthCard } from "@/components/shell/auth-card";

export const metadata = { title: "Confirm your email address" };
export const dynamic = "force-dynamic";

// The link proves the mailbox; the password proves who made the account. Someone who signed up with
// another person's address cannot confirm it (no mailbox), and the address's owner cannot confirm an
// account whose password someone else chose: they remove it, or choose a password of their own.
export default async function VerifyPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const { token } = await searchParams;
  return (
    <AuthCard title="Confirm your email address" description="Type the password you chose when you signed up to finish.">
      {token ? (
        <>
          <VerifyEmailForm action={verifyEmailAction} token={token} />
          <section aria-labelledby="not-me" className="mt-8 border-t border-slate-200 pt-6">
            <h2 id="not-me" className="text-sm font-semibold text-slate-900">
              Did not sign up, or do not know this password?
            </h2>
            <p className="mt-1 text-sm text-slate-600">
              Someone may have signed up with your address. Remove that account, then sign up with a password of your own, or{" "}
              <Link className="font-medium text-indigo-700 hover:underline" href="/password-reset">
                choose a new password
              </Link>{" "}
              for it through a reset link sent to this address.
            </p>
            <TokenActionForm
              action={discardSignupAction}
              token={token}
              label="Remove this unconfirmed account"
              variant="danger"
              done={
                <Link className="font-medium text-indigo-700 hover:underline" href="/signup">
                  Sign up with your address →
                </Link>
              }
            />
          </section>
        </>
      ) : (
        <p className="mt-6 text-sm text-slate-600">This page needs the link from the email we sent. Open the link from that email again.</p>
      )}
    </AuthCard>
  );
}
