import { discardSignupAction, verifyEmailAction } from "@/app/_actions/accounts";
import { VerifyEmailForm } from "@/components/forms/account-forms";
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
        <VerifyEmailForm action={verifyEmailAction} discard={discardSignupAction} token={token} />
      ) : (
        <p className="mt-6 text-sm text-slate-600">This page needs the link from the email we sent. Open the link from that email again.</p>
      )}
    </AuthCard>
  );
}
