import Link from "next/link";
import { confirmPasswordResetAction } from "@/app/_actions/accounts";
import { ResetConfirmForm } from "@/components/forms/account-forms";
import { AuthCard } from "@/components/shell/auth-card";
import { MIN_PASSWORD_LENGTH } from "@/lib/auth/password";

export const metadata = { title: "Choose a new password" };
export const dynamic = "force-dynamic";

export default async function PasswordResetConfirmPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const { token } = await searchParams;
  return (
    <AuthCard title="Choose a new password" description="Every browser signed in to your account is signed out; API keys keep working.">
      {token ? (
        <ResetConfirmForm action={confirmPasswordResetAction} token={token} minLength={MIN_PASSWORD_LENGTH} />
      ) : (
        <p className="mt-6 text-sm text-slate-600">
          This page needs the link from the reset email.{" "}
          <Link className="font-medium text-indigo-700 hover:underline" href="/password-reset">
            Ask for one
          </Link>
          .
        </p>
      )}
    </AuthCard>
  );
}
