import { z } from "zod";
import { validationFailed } from "@/lib/errors";

// Keyset pagination over (created_at, id): stable under concurrent inserts, unlike OFFSET.

export const paginationQuery = {
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(200).optional(),
};

export interface Cursor {
  createdAt: Date;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${c.createdAt.toISOString()}|${c.id}`).toString("base64url");
}

export function decodeCursor(raw: string | undefined): Cursor | undefined {
  if (!raw) return undefined;
  const [iso, id] = Buffer.from(raw, "base64url").toString("utf8").split("|");
  const createdAt = new Date(iso ?? "");
  if (!id || Number.isNaN(createdAt.getTime())) {
    throw validationFailed([{ path: "cursor", message: "Invalid cursor" }]);
  }
  return { createdAt, id };
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
