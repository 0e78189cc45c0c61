/** What each role may do, in the words the console shows (pure; the rules themselves live where they are enforced). */
export const ROLE_SUMMARIES = {
  operator: "Operators run the platform: every tenant, the fleet, billing, alerts and settings.",
  tenant_admin: "Admins also manage the organisation's users and API keys, and may cancel any of its jobs.",
  tenant_member:
    "Members submit jobs and pipelines, run and change the organisation's endpoints, see its work and billing, and cancel the jobs they submitted themselves.",
} as const;
