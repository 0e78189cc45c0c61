// The one error vocabulary of GPUForge. Domain code throws these; exactly one place
// (lib/http/error-response.ts) turns them into HTTP status codes and API.md's JSON shape.

export type ErrorCode =
  | "validation_failed"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "invalid_transition"
  | "stale_report"
  | "no_capacity"
  | "payload_too_large"
  | "method_not_allowed"
  | "unsatisfiable"
  | "nothing_to_invoice"
  | "rate_limited"
  | "unavailable"
  | "bad_gateway"
  | "gateway_timeout";

export interface FieldIssue {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldIssue[] = [],
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const validationFailed = (details: FieldIssue[], message = "Request validation failed") =>
  new AppError("validation_failed", message, details);
export const unauthorized = (message = "Missing or invalid credentials") => new AppError("unauthorized", message);
export const forbidden = (message = "You are not allowed to do this") => new AppError("forbidden", message);
export const notFound = (what = "Resource") => new AppError("not_found", `${what} not found`);
export const conflict = (message: string, details: FieldIssue[] = []) => new AppError("conflict", message, details);
export const invalidTransition = (message: string) => new AppError("invalid_transition", message);
/** An agent's report about a placement that is no longer current: the work has moved on. */
export const staleReport = (message = "This report is about a placement that is no longer current; nothing was changed") =>
  new AppError("stale_report", message);
/** The fleet cannot serve a booking in the window asked for; details say what is free and when it would fit. */
export const noCapacity = (message: string, details: FieldIssue[] = []) => new AppError("no_capacity", message, details);
/** A read-only listener answers every method but GET with this, whatever the path. */
export const methodNotAllowed = (method: string) =>
  new AppError("method_not_allowed", `${method} is not allowed here: this API is read-only (GET)`);
export const payloadTooLarge = (message: string) => new AppError("payload_too_large", message);
export const unsatisfiable = (message: string, details: FieldIssue[] = []) => new AppError("unsatisfiable", message, details);
export const nothingToInvoice = (message: string) => new AppError("nothing_to_invoice", message);
export const rateLimited = (message = "Too many requests") => new AppError("rate_limited", message);
/** Something this deployment cannot do at all right now (not the caller's fault, not a bug). */
export const unavailable = (message: string) => new AppError("unavailable", message);
/** The inference gateway could not get an answer from any replica (refused, reset, broke off). */
export const badGateway = (message: string) => new AppError("bad_gateway", message);
/** The inference gateway's replica did not answer in time. */
export const gatewayTimeout = (message: string) => new AppError("gateway_timeout", message);

export const HTTP_STATUS: Record<ErrorCode, number> = {
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid_transition: 409,
  stale_report: 409,
  no_capacity: 409,
  payload_too_large: 413,
  method_not_allowed: 405,
  unsatisfiable: 422,
  nothing_to_invoice: 422,
  rate_limited: 429,
  unavailable: 503,
  bad_gateway: 502,
  gateway_timeout: 504,
};

export function isAppError(e: unknown): e is AppError {
  if (e instanceof AppError) return true;
  // a bundle may hold two copies of this module (one per server layer): recognise the other copy's errors too
  if (!(e instanceof Error) || e.name !== "AppError") return false;
  const x = e as Partial<AppError>;
  return typeof x.code === "string" && Object.hasOwn(HTTP_STATUS, x.code) && Array.isArray(x.details);
}

/** Prisma's unique-violation error, mapped to a conflict that names the field. */
export function uniqueViolationToConflict(e: unknown, field: string, message: string): never {
  if (isUniqueViolation(e)) throw conflict(message, [{ path: field, message }]);
  throw e;
}

export function isUniqueViolation(e: unknown): boolean {
  if (typeof e !== "object" || e === null) return false;
  const err = e as { code?: string; cause?: { code?: string }; meta?: { driverAdapterError?: { cause?: { originalCode?: string } } } };
  // P2010: a raw query's failure, with the database's own code from the driver adapter
  return (
    err.code === "P2002" ||
    err.code === "23505" ||
    err.cause?.code === "23505" ||
    (err.code === "P2010" && err.meta?.driverAdapterError?.cause?.originalCode === "23505")
  );
}

/** A lookup whose refusal (missing, or not the caller's) means "not found"; any other failure still throws. */
export function nullIfRefused<T>(lookup: Promise<T>): Promise<T | null> {
  return lookup.catch((e: unknown) => (isAppError(e) ? null : Promise.reject(e)));
}
