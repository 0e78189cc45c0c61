import { invoiceLabel } from "./money";

interface InvoiceForDocument {
  number: number;
  periodStart: Date;
  periodEnd: Date;
  amountCents: bigint;
  lines: Array<{ gpuType: string; jobId: string | null; endpointId: string | null; reservationId?: string | null; description: string; gpuSeconds: bigint; amountCents: bigint }>;
}

const cell = (v: string | number) => {
  const s = String(v);
  // quote what needs it, and defuse spreadsheet formulas in text cells
  const safe = /^[=+\-@\t\r]/.test(s) && typeof v === "string" ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/** An invoice's lines as CSV (one row per job, amounts in cents and dollars, a total row). */
export function invoiceCsv(inv: InvoiceForDocument): { filename: string; body: string } {
  const rows: Array<Array<string | number>> = [["invoice", "period_start", "period_end", "gpu_type", "job_id", "endpoint_id", "description", "gpu_seconds", "gpu_hours", "amount_cents", "amount_usd", "reservation_id"]];
  const label = invoiceLabel(inv.number);
  for (const l of inv.lines) {
    rows.push([label, inv.periodStart.toISOString(), inv.periodEnd.toISOString(), l.gpuType, l.jobId ?? "", l.endpointId ?? "", l.description, Number(l.gpuSeconds), (Number(l.gpuSeconds) / 3600).toFixed(4), Number(l.amountCents), (Number(l.amountCents) / 100).toFixed(2), l.reservationId ?? ""]);
  }
  rows.push([label, "", "", "", "", "", "Total", inv.lines.reduce((s, l) => s + Number(l.gpuSeconds), 0), "", Number(inv.amountCents), (Number(inv.amountCents) / 100).toFixed(2), ""]);
  return { filename: `${label}.csv`, body: rows.map((r) => r.map(cell).join(",")).join("\r\n") + "\r\n" };
}
