// A waiting job's reason is written for its tenant ("your organisation holds 39 of its 64 GPUs").
// An operator reads every tenant's jobs, and the same words told them about an organisation they
// do not belong to (issue 32): for them the reason speaks about the tenant, by name. Pure.

const RULES: Array<[RegExp, (tenant: string) => string]> = [
  [/\bYour organisation's\b/g, (t) => `${t}'s`],
  [/\byour organisation's\b/g, (t) => `${t}'s`],
  [/\bYour organisation\b/g, (t) => t],
  [/\byour organisation\b/g, (t) => t],
  [/\byour prepaid balance is used up; add funds and it runs\b/g, (t) => `${t}'s prepaid balance is used up; it runs once funds arrive`],
  [/\byour prepaid balance\b/g, (t) => `${t}'s prepaid balance`],
  [/\byour quota\b/g, () => "its quota"],
  [/\byour retries\b/g, () => "its retries"],
  [/\byour reservation\b/g, () => "its reservation"],
];

/** The reason as an operator reads it: about the tenant named `tenant`, not to it. */
export function aboutTenant(reason: string, tenant: string): string;
export function aboutTenant(reason: string | null, tenant: string): string | null;
export function aboutTenant(reason: string | null, tenant: string): string | null {
  if (reason === null) return null;
  return RULES.reduce((text, [pattern, words]) => text.replace(pattern, words(tenant)), reason);
}
