import Link from "next/link";
import { discardSignupAction } from "@/app/_actions/accounts";
import { TokenActionForm } from "@/components/forms/account-forms";
import { AuthCard } from "@/components/shell/auth-card";

export const metadata = { title: "Discard an unconfirmed sign-up" };
export const dynamic = "force-dynamic";

export default async function DiscardPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const { token } = await searchParams;
  return (
    <AuthCard
      title="Discard an unconfirmed sign-up"
      description="Someone signed up with your address and has not confirmed it. If it was not you, remove that account here."
    >
      {token ? (
        <TokenActionForm
          action={discardSignupAction}
          token={token}
          label="Remove the unconfirmed account"
          variant="danger"
          done={
            <Link className="font-medium text-indigo-700 hover:underline" href="/signup">
              Sign up with your address →
            </Link>
          }
        />
      ) : (
        <p className="mt-6 text-sm text-slate-600">This page needs the link from the email we sent.</p>
      )}
    </AuthCard>
  );
}
