import { toCsv } from "@/lib/http/csv";
import { invoiceLabel, isNegligibleLine } from "./money";

interface InvoiceForDocument {
  number: number;
  periodStart: Date;
  periodEnd: Date;
  amountCents: bigint;
  lines: Array<{
    gpuType: string;
    jobId: string | null;
    endpointId: string | null;
    reservationId?: string | null;
    coveredByReservationId?: string | null;
    description: string;
    gpuSeconds: bigint;
    amountCents: bigint;
  }>;
}

/** An invoice's lines as CSV (one row per job, amounts in cents and dollars, a total row). */
export function invoiceCsv(inv: InvoiceForDocument): { filename: string; body: string } {
  const header = [
    "invoice",
    "period_start",
    "period_end",
    "gpu_type",
    "job_id",
    "endpoint_id",
    "description",
    "gpu_seconds",
    "gpu_hours",
    "amount_cents",
    "amount_usd",
    "reservation_id",
    "covered_by_reservation_id",
  ];
  const rows: Array<Array<string | number>> = [];
  const label = invoiceLabel(inv.number);
  for (const l of inv.lines.filter((x) => !isNegligibleLine(x.gpuSeconds, x.amountCents))) {
    rows.push([
      label,
      inv.periodStart.toISOString(),
      inv.periodEnd.toISOString(),
      l.gpuType,
      l.jobId ?? "",
      l.endpointId ?? "",
      l.description,
      Number(l.gpuSeconds),
      (Number(l.gpuSeconds) / 3600).toFixed(4),
      Number(l.amountCents),
      (Number(l.amountCents) / 100).toFixed(2),
      l.reservationId ?? "",
      l.coveredByReservationId ?? "",
    ]);
  }
  rows.push([
    label,
    "",
    "",
    "",
    "",
    "",
    "Total",
    inv.lines.reduce((s, l) => s + Number(l.gpuSeconds), 0),
    "",
    Number(inv.amountCents),
    (Number(inv.amountCents) / 100).toFixed(2),
    "",
    "",
  ]);
  return { filename: `${label}.csv`, body: toCsv(header, rows) };
}
