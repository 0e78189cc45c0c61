import Link from "next/link";
import { requestPasswordResetAction } from "@/app/_actions/accounts";
import { ResetRequestForm } from "@/components/forms/account-forms";
import { AuthCard } from "@/components/shell/auth-card";

export const metadata = { title: "Reset your password" };

export default function PasswordResetPage() {
  return (
    <AuthCard
      title="Reset your password"
      description="We email you a link to choose a new one."
      below={
        <Link className="font-medium text-white underline" href="/login">
          Back to sign-in
        </Link>
      }
    >
      <ResetRequestForm action={requestPasswordResetAction} />
    </AuthCard>
  );
}
