import Link from "next/link";
import { CopyLine } from "@/components/ui/copy-line";
import { formatDateTime } from "@/components/ui/format";
import { formatCents, formatDuration } from "@/lib/billing/money";
import type { BankDetails } from "@/lib/settings/schemas";

/**
 * Whether the invoice's payment link reached the tenant, as the outbox recorded its email: sent (to
 * whom, when), on its way, failed (why), or never sent (why), with the link to share by hand.
 */
export function PaymentLinkStatus({
  delivery,
  url,
}: {
  delivery: { state: string; target: string | null; sentAt: string | null; error: string | null };
  url: string;
}) {
  const says: Record<string, { tone: string; text: string }> = {
    sent: { tone: "text-emerald-800", text: `Payment link sent to ${delivery.target} by email, ${formatDateTime(delivery.sentAt)}.` },
    pending: {
      tone: "text-slate-700",
      text: `Payment link queued for ${delivery.target}; not delivered yet${delivery.error ? ` (last try: ${delivery.error})` : ""}.`,
    },
    failed: {
      tone: "text-red-700",
      text: `The payment link email to ${delivery.target} failed: ${delivery.error ?? "unknown error"}. Share the link yourself.`,
    },
    not_queued: { tone: "text-slate-700", text: "No email was sent for this invoice. Share the link with the tenant." },
    no_email_channel: {
      tone: "text-amber-800",
      text: "Not sent: no email server is configured (Settings → Notification channels). Share the link with the tenant.",
    },
    no_billing_email: {
      tone: "text-amber-800",
      text: "Not sent: the tenant has no billing email. Share the link, or add an address on its page.",
    },
  };
  const s = says[delivery.state] ?? says.not_queued!;
  return (
    <div className="space-y-2" data-testid="payment-link-status" data-state={delivery.state}>
      <p className={`text-sm ${s.tone}`}>{s.text}</p>
      <CopyLine text={url} label="Payment link" />
    </div>
  );
}

/** Bank details with the reference to write on the transfer; without details, who to ask. */
export function BankTransfer({
  bank,
  reference,
  amountCents,
  demo = false,
}: {
  bank: BankDetails | null;
  reference: string;
  amountCents?: number;
  /** the demo's seeded details: said so, since no money moves */
  demo?: boolean;
}) {
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
      {demo ? (
        <p className="mt-2 rounded-md bg-amber-50 px-3 py-2 text-xs text-amber-900 ring-1 ring-amber-200" data-testid="demo-bank-note">
          Demo: these are the demo operator&apos;s bank details, seeded at first start; no real account is behind them. In the demo the
          operator records the transfer from the invoice&apos;s page (Billing → the invoice → Record bank payment).
        </p>
      ) : null}
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
