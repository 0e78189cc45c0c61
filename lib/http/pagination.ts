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

/** Prisma `where` for rows after the cursor when listing newest first. */
export function afterCursor(c: Cursor | undefined) {
  if (!c) return {};
  return { OR: [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }] };
}

/** Takes `limit + 1` rows and splits them into the page and the next cursor. */
export function page<T extends { createdAt: Date; id: string }>(rows: T[], limit: number) {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}
