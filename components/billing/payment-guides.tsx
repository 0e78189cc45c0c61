import Link from "next/link";
import { formatDateTime } from "@/components/ui/format";
import { formatCents, formatDuration } from "@/lib/billing/money";
import type { BankDetails } from "@/lib/settings/schemas";

/** Bank details with the reference to write on the transfer; without details, who to ask. */
export function BankTransfer({ bank, reference, amountCents }: { bank: BankDetails | null; reference: string; amountCents?: number }) {
  if (!bank) {
    return (
      <p className="text-sm text-slate-600">
        To pay by bank transfer, ask your operator for their bank details and quote the reference{" "}
        <strong className="font-mono text-slate-900">{reference}</strong>; they record the payment when it arrives.
      </p>
    );
  }
  const rows: Array<[string, string | undefined]> = [
    ["Account holder", bank.account_name],
    ["IBAN / account", bank.iban],
    ["BIC / SWIFT", bank.bic],
    ["Bank", bank.bank_name],
    ["Amount", amountCents === undefined ? undefined : formatCents(amountCents)],
    ["Reference", reference],
  ];
  return (
    <div className="text-sm" data-testid="bank-transfer">
      <dl className="grid gap-x-6 gap-y-2 sm:grid-cols-[max-content_1fr]">
        {rows
          .filter((r): r is [string, string] => Boolean(r[1]))
          .map(([k, v]) => (
            <div key={k} className="contents">
              <dt className="text-slate-500">{k}</dt>
              <dd className={`select-all font-medium text-slate-900 ${k === "Reference" || k === "IBAN / account" ? "font-mono" : ""}`}>
                {v}
              </dd>
            </div>
          ))}
      </dl>
      <p className="mt-3 text-slate-600">
        {bank.instructions || "Your operator records the payment when it arrives; it then shows here."} Always quote the reference.
      </p>
    </div>
  );
}

/**
 * The prepaid balance as it stands: empty (new work waits, running work stops after the grace
 * period), low (under a day of the current spend, with the projected time to zero), or nothing.
 */
export function BalanceBanner({
  outlook,
  href,
}: {
  outlook: {
    balance_cents: number;
    unbilled_cents: number;
    spend_cents_per_hour: number;
    level: "empty" | "low" | "ok";
    zero_at: string | null;
    grace_s: number;
  };
  href?: string;
}) {
  if (outlook.level === "ok") return null;
  const grace = formatDuration(outlook.grace_s * 1000);
  const empty = outlook.level === "empty";
  return (
    <div
      role="status"
      data-testid="balance-banner"
      className={`mb-6 rounded-lg px-4 py-3 text-sm ring-1 ${empty ? "bg-red-50 text-red-900 ring-red-200" : "bg-amber-50 text-amber-900 ring-amber-200"}`}
    >
      <p>
        <strong>{empty ? "Your prepaid balance is used up." : "Your prepaid balance is running low."}</strong>{" "}
        {empty
          ? `New work waits until funds arrive, and running work stops ${grace} after the balance reached zero.`
          : `At the current spend (${formatCents(outlook.spend_cents_per_hour)} per hour) it reaches zero in about ${formatDuration(Date.parse(outlook.zero_at!) - Date.now())}, around ${formatDateTime(outlook.zero_at)}. Then new work waits, and running work stops ${grace} later.`}{" "}
        {href ? (
          <Link className="font-medium underline" href={href}>
            Add funds
          </Link>
        ) : null}
      </p>
    </div>
  );
}
