import Link from "next/link";
import { verifyEmailAction } from "@/app/_actions/accounts";
import { TokenActionForm } from "@/components/forms/account-forms";
import { AuthCard } from "@/components/shell/auth-card";

export const metadata = { title: "Confirm your email address" };
export const dynamic = "force-dynamic";

export default async function VerifyPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const { token } = await searchParams;
  return (
    <AuthCard title="Confirm your email address" description="One click to finish signing up.">
      {token ? (
        <TokenActionForm
          action={verifyEmailAction}
          token={token}
          label="Confirm my email address"
          done={
            <Link
              className="inline-block rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white hover:bg-indigo-500"
              href="/login"
            >
              Sign in
            </Link>
          }
        />
      ) : (
        <p className="mt-6 text-sm text-slate-600">This page needs the link from the email we sent. Open the link from that email again.</p>
      )}
    </AuthCard>
  );
}
