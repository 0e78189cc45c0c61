import { z } from "zod";

/**
 * The search parameters of the console's lists (queue, jobs, audit, alerts, notifications) and of
 * their CSV exports (pure): free-text search, date range, sort, page. Each list adds its own
 * filters. A page reads them leniently (a hand-edited address drops the bad value, never errors);
 * the export route reads them strictly, so a script learns what it got wrong.
 */

const PAGE_SIZES = [25, 50, 100] as const;
/** The most rows one CSV export writes. */
export const EXPORT_LIMIT = 10_000;

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "A date as YYYY-MM-DD");

export const listParamsShape = {
  q: z.string().trim().max(100).optional(),
  from: day.optional(),
  to: day.optional(),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  per_page: z.coerce
    .number()
    .int()
    .refine((n) => (PAGE_SIZES as readonly number[]).includes(n), "25, 50 or 100")
    .default(50),
};

/** Reads `sp` against `schema` and keeps every valid field: an invalid one falls back to its default, alone. */
export function readListParams<S extends z.ZodObject>(schema: S, sp: Record<string, string | string[] | undefined>): z.output<S> {
  const flat = Object.fromEntries(
    Object.entries(sp)
      .map(([k, v]) => [k, Array.isArray(v) ? v[0] : v])
      .filter(([, v]) => v !== undefined && v !== ""),
  );
  const parsed = schema.safeParse(flat);
  if (parsed.success) return parsed.data;
  const bad = new Set(parsed.error.issues.map((i) => String(i.path[0])));
  return schema.parse(Object.fromEntries(Object.entries(flat).filter(([k]) => !bad.has(k) && k in schema.shape)));
}

/** A [from, to] pair of whole days (UTC, both included) as a Prisma date filter. */
export function dayRange(from?: string, to?: string): { gte?: Date; lt?: Date } | undefined {
  if (!from && !to) return undefined;
  return {
    ...(from ? { gte: new Date(`${from}T00:00:00Z`) } : {}),
    ...(to ? { lt: new Date(new Date(`${to}T00:00:00Z`).getTime() + 86_400_000) } : {}),
  };
}

export function pageWindow(p: { page: number; per_page: number }) {
  return { skip: (p.page - 1) * p.per_page, take: p.per_page };
}

/** The query string of a list with some parameters changed (page reset unless given): links of sorting, paging and export. */
export function listHref(
  base: string,
  current: Record<string, unknown>,
  changes: Record<string, string | number | undefined> = {},
): string {
  const merged: Record<string, unknown> = { ...current, page: undefined, ...changes };
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(merged)) {
    if (v === undefined || v === null || v === "") continue;
    if ((k === "page" && v === 1) || (k === "per_page" && v === 50)) continue;
    qs.set(k, typeof v === "object" ? JSON.stringify(v) : String(v as string | number | boolean));
  }
  const s = qs.toString();
  return s ? `${base}?${s}` : base;
}

/** A case-insensitive "contains" for Prisma, or nothing for an empty search. */
export const contains = (q: string | undefined) => (q ? { contains: q, mode: "insensitive" as const } : undefined);
