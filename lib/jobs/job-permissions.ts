import type { Principal } from "@/lib/auth/principal";

/**
 * Who may cancel a job (pure). Operators may cancel any job. In an organisation, admins (and its
 * API keys, which act with admin rights) may cancel any of its jobs; a member may cancel the jobs
 * they submitted themselves, not a colleague's. The console says so next to the button.
 */
export const CANCEL_POLICY = "Admins may cancel any of the organisation's jobs; members may cancel the jobs they submitted themselves.";

export function mayCancelJob(p: Principal, job: { tenantId: string; submittedBy: string | null }): boolean {
  if (p.kind === "operator") return true;
  if (p.kind !== "tenant" || p.tenantId !== job.tenantId) return false;
  if (p.role === "tenant_admin") return true;
  return Boolean(p.userId && !p.keyId && job.submittedBy === p.userId);
}

/** Why a principal may not cancel a job, in the words the console and the API answer with. */
export function cancelRefusal(p: Principal): string {
  return p.kind === "tenant" && p.role === "tenant_member"
    ? "Members can cancel only the jobs they submitted; ask an admin of your organisation to cancel this one."
    : "Not allowed to cancel this job";
}
