import Link from "next/link";
import { signUpAction } from "@/app/_actions/accounts";
import { SignUpForm } from "@/components/forms/account-forms";
import { AuthCard } from "@/components/shell/auth-card";
import { MIN_PASSWORD_LENGTH } from "@/lib/auth/password";
import { productName } from "@/lib/platform/public-url";
import { effectiveSettings } from "@/lib/settings/settings";

export const metadata = { title: "Create an account" };
export const dynamic = "force-dynamic";

export default async function SignUpPage() {
  const { signup } = await effectiveSettings();
  const product = productName();
  if (!signup.enabled)
    return (
      <AuthCard title="Sign-up is closed" description={`${product} accounts on this installation are created by its operators.`}>
        <p className="mt-6 text-sm text-slate-600">
          Ask the operator of this installation for an account, or{" "}
          <Link className="font-medium text-indigo-700 hover:underline" href="/#demo">
            ask us for a demo
          </Link>
          .
        </p>
      </AuthCard>
    );
  return (
    <AuthCard
      title={`Create your ${product} account`}
      description="Pay as you go from a prepaid balance: add funds by card, run GPUs by the second."
      below={
        <>
          Already have an account?{" "}
          <Link className="font-medium text-white underline" href="/login">
            Sign in
          </Link>
        </>
      }
    >
      <SignUpForm action={signUpAction} minLength={MIN_PASSWORD_LENGTH} />
      <p className="mt-6 text-xs text-slate-500">
        New accounts start with a small quota (the operator raises it on request). We email you a link to confirm your address; until then
        the account cannot sign in.
      </p>
    </AuthCard>
  );
}
