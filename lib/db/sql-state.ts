// PostgreSQL's SQLSTATE of a failed statement, from whichever client raised it: node-postgres puts
// it on the error, Prisma's driver adapter deep inside its metadata.
function sqlState(e: unknown): string | undefined {
  if (typeof e !== "object" || e === null) return undefined;
  const err = e as { code?: unknown; cause?: { code?: unknown }; meta?: { driverAdapterError?: { cause?: { code?: unknown } } } };
  const candidates = [err.meta?.driverAdapterError?.cause?.code, err.cause?.code, err.code];
  return candidates.find((c): c is string => typeof c === "string" && /^[0-9A-Z]{5}$/.test(c));
}

/** Another transaction holds the node (a booking's exclusion constraint or guard) or a lock cycle was broken: try again. */
export const isRetryableBookingConflict = (e: unknown) => ["23P01", "40P01", "40001"].includes(sqlState(e) ?? "");

// The database cannot take the request now (it restarts, refuses connections, or every connection
// is busy past the wait): nothing the caller sent is wrong, and the same request may succeed shortly.
const UNAVAILABLE_PRISMA_CODES = new Set(["P1001", "P1002", "P1017", "P2024", "P2028"]);
const UNAVAILABLE_SQL_STATES = /^(08...|57P0[123]|53300)$/;
const UNAVAILABLE_NODE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT"]);
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|Unable to start a transaction in the given time/;

export function isDatabaseUnavailable(e: unknown): boolean {
  if (typeof e !== "object" || e === null) return false;
  const err = e as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof err.code === "string" && (UNAVAILABLE_PRISMA_CODES.has(err.code) || UNAVAILABLE_NODE_CODES.has(err.code))) return true;
  const state = sqlState(e);
  if (state && UNAVAILABLE_SQL_STATES.test(state)) return true;
  if (typeof err.message === "string" && UNAVAILABLE_MESSAGES.test(err.message)) return true;
  return err.cause !== undefined && err.cause !== e && isDatabaseUnavailable(err.cause);
}
