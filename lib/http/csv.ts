/**
 * CSV as spreadsheets read it (RFC 4180, CRLF): cells with quotes, commas or line breaks are
 * quoted, and text that a spreadsheet would run as a formula (= + - @ at the start) is defused
 * with a leading apostrophe. Numbers are written as they are.
 */
export type CsvCell = string | number | boolean | null | undefined;

export function csvCell(v: CsvCell): string {
  if (v === null || v === undefined) return "";
  const s = String(v);
  const safe = typeof v === "string" && /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(header: string[], rows: CsvCell[][]): string {
  return [header, ...rows].map((r) => r.map(csvCell).join(",")).join("\r\n") + "\r\n";
}
