import { z } from "zod";
import { isUuid } from "@/lib/ids";
import { validationFailed } from "@/lib/errors";

// Keyset pagination over (created_at, id): stable under concurrent inserts, unlike OFFSET.
//
// A cursor is the client's to send back, so it is input like any other: every list checks it in
// its query schema (paginationQuery, idCursor) before anything reaches a query, and answers 400
// naming `cursor` for one it did not hand out — a forged id of the wrong type, a time outside what
// PostgreSQL can hold, or a number beyond bigint would otherwise fail deep in the database as a 500.

/** What PostgreSQL's timestamptz holds comfortably: cursors outside these years are not ours. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);

/** Decodes a keyset cursor; null when it is not one this server could have written. */
function parseCursor(raw: string): Cursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(raw)) return null;
  const parts = Buffer.from(raw, "base64url").toString("utf8").split("|");
  if (parts.length !== 2) return null;
  const [iso, id] = parts as [string, string];
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.test(iso) || !isUuid(id)) return null;
  const createdAt = new Date(iso);
  const t = createdAt.getTime();
  if (Number.isNaN(t) || t < EARLIEST || t > LATEST) return null;
  return { createdAt, id: id.toLowerCase() };
}

export const paginationQuery = {
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z
    .string()
    .max(200)
    .refine((c) => parseCursor(c) !== null, "Invalid cursor: send back a next_cursor this list returned")
    .optional(),
};

/** The largest id a bigint column holds. */
const MAX_BIGINT = 9_223_372_036_854_775_807n;

/** A cursor that is the last numeric id seen (lists of bigint ids: the audit log, the ledger). */
export const idCursor = (message = "Invalid cursor: send back a next_cursor this list returned") =>
  z.string().refine((c) => /^[1-9]\d{0,18}$/.test(c) && BigInt(c) <= MAX_BIGINT, message);

export interface Cursor {
  createdAt: Date;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${c.createdAt.toISOString()}|${c.id}`).toString("base64url");
}

/** The cursor's position; a second check behind the query schemas, for callers that did not validate. */
export function decodeCursor(raw: string | undefined): Cursor | undefined {
  if (!raw) return undefined;
  const c = parseCursor(raw);
  if (!c) throw validationFailed([{ path: "cursor", message: "Invalid cursor" }]);
  return c;
}

/** Prisma `where` for rows after the cursor when listing newest first by `field` (then id). */
export function afterCursor(c: Cursor | undefined, field = "createdAt") {
  if (!c) return {};
  return { OR: [{ [field]: { lt: c.createdAt } }, { [field]: c.createdAt, id: { lt: c.id } }] };
}

/** Takes `limit + 1` rows and splits them into the page and the next cursor (ordered by `timeOf`, then id). */
export function page<T extends { id: string }>(
  rows: T[],
  limit: number,
  timeOf: (row: T) => Date = (r) => (r as unknown as { createdAt: Date }).createdAt,
) {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: timeOf(last), id: last.id }) : null };
}
