import Link from "next/link";
import { notFound } from "next/navigation";
import { recordBankPaymentAction, refundAction, voidInvoiceAction } from "@/app/_actions/billing";
import { InvoiceDocument } from "@/components/billing/invoice-document";
import { BankPaymentForm, InvoiceButton, RefundForm } from "@/components/forms/billing-forms";
import { buttonClass } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { requireOperatorPage } from "@/lib/auth/session";
import { getInvoiceOrThrow } from "@/lib/billing/get-invoice";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { isAppError } from "@/lib/errors";
import { getTenantOrThrow } from "@/lib/tenants/queries";
import { PrintButton } from "@/components/billing/print-button";
import { isUuid } from "@/lib/ids";

export const metadata = { title: "Invoice" };

export default async function AdminInvoicePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const p = await requireOperatorPage(`/admin/billing/invoices/${id}`);
  if (!isUuid(id)) notFound();
  const inv = await getInvoiceOrThrow(p, id).catch((e) => (isAppError(e) ? null : Promise.reject(e)));
  if (!inv) notFound();
  const tenant = await getTenantOrThrow(p, inv.tenantId);
  const view = invoiceJson(inv);
  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-4 text-sm text-slate-500 print:hidden">
        <Link href="/admin/billing" className="hover:underline">Billing</Link> / <Link href={`/admin/tenants/${tenant.id}`} className="hover:underline">{tenant.name}</Link>
      </nav>
      <div className="mb-4 flex flex-wrap gap-3 print:hidden">
        <PrintButton />
        <a className={buttonClass("secondary")} href={`/api/invoices/${id}/csv`} download>Download CSV</a>
      </div>
      <InvoiceDocument invoice={view} tenantName={tenant.name} billingEmail={tenant.billingEmail} />
      {view.status === "pending" ? (
        <Card className="mt-6 print:hidden">
          <CardHeader title="Payment" description={view.payment_url ? `Payment link sent to the tenant: ${view.payment_url}` : undefined} />
          <div className="space-y-4 p-5">
            <BankPaymentForm action={recordBankPaymentAction} invoiceId={id} />
            <InvoiceButton action={voidInvoiceAction} invoiceId={id} label="Void invoice" variant="danger" confirmText="Void this invoice? Its usage returns to the next invoice." />
          </div>
        </Card>
      ) : null}
      {view.status === "paid" ? (
        <Card className="mt-6 print:hidden">
          <CardHeader title="Refund" description="Credit part or all of this invoice back to the tenant's balance. Refunds never add up to more than was paid." />
          <div className="p-5"><RefundForm action={refundAction} invoiceId={id} /></div>
        </Card>
      ) : null}
    </>
  );
}
