// PostgreSQL's SQLSTATE of a failed statement, from whichever client raised it: node-postgres puts
// it on the error, Prisma's driver adapter deep inside its metadata.
export function sqlState(e: unknown): string | undefined {
  if (typeof e !== "object" || e === null) return undefined;
  const err = e as { code?: unknown; cause?: { code?: unknown }; meta?: { driverAdapterError?: { cause?: { code?: unknown } } } };
  const candidates = [err.meta?.driverAdapterError?.cause?.code, err.cause?.code, err.code];
  return candidates.find((c): c is string => typeof c === "string" && /^[0-9A-Z]{5}$/.test(c));
}

/** Another transaction holds the node (a booking's exclusion constraint or guard) or a lock cycle was broken: try again. */
export const isRetryableBookingConflict = (e: unknown) => ["23P01", "40P01", "40001"].includes(sqlState(e) ?? "");
