// The Slurm account a tenant's jobs run under (sbatch --account). Pure.
//
// What --account means depends on the site. With accounting (slurmdbd) and
// AccountingStorageEnforce=associations, Slurm refuses a job whose account has no association, so
// the site creates each tenant's account once (`sacctmgr -i add account gf-acme`, and adds the
// bridge's user to it) and Slurm's own accounting and fair share see the tenants apart. With
// AccountingStorageType=accounting_storage/none (no slurmdbd) nothing checks it: the account is a
// label on the job (squeue %a, SLURM_JOB_ACCOUNT, job_submit plugins), and GPUForge's quotas, fair
// share and billing are the ones that count either way.

/** Slurm stores account names in lower case; ours are short, readable and stable. */
export const ACCOUNT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** `gf-acme-research` from "Acme Research"; a name with no letters or digits becomes `gf-tenant`. */
export function accountNameFor(tenantName: string): string {
  const slug = tenantName
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return `gf-${slug || "tenant"}`;
}

/** The same name made unique with a piece of the tenant's id, when another tenant has it already. */
export function disambiguatedAccountName(tenantName: string, tenantId: string): string {
  return `${accountNameFor(tenantName).slice(0, 50)}-${tenantId.replace(/-/g, "").slice(0, 8)}`;
}
