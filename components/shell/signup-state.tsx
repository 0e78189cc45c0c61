import { Badge } from "@/components/ui/badge";
import { formatDateTime } from "@/components/ui/format";

/** Where a tenant came from, and for a self-service sign-up whether its address is verified (or when it expires unverified). */
export function SignupState({
  origin,
  expiresAt,
  admin,
}: {
  origin: string;
  expiresAt: Date | null;
  admin: { email: string; emailVerifiedAt: Date | null } | null;
}) {
  if (origin !== "signup") return <span className="text-xs text-slate-500">operator</span>;
  if (expiresAt)
    return (
      <span className="flex flex-col gap-0.5">
        <Badge tone="amber">sign-up · unverified</Badge>
        <span className="text-xs text-slate-500">removed {formatDateTime(expiresAt)} unless confirmed</span>
      </span>
    );
  return (
    <span className="flex flex-col gap-0.5">
      <Badge tone="sky">sign-up · verified</Badge>
      {admin?.emailVerifiedAt ? <span className="text-xs text-slate-500">{formatDateTime(admin.emailVerifiedAt)}</span> : null}
    </span>
  );
}
