import { randomUUID } from "node:crypto";
import { z } from "zod";
import { isDatabaseUnavailable } from "@/lib/db/sql-state";
import { HTTP_STATUS, isAppError, unavailable, type AppError, type FieldIssue } from "@/lib/errors";
import { logger } from "@/lib/logger";

// The only place where errors become HTTP responses.

export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })),
      request_id: z.string().optional(),
    }),
  })
  .meta({ id: "Error" });

export function errorResponse(e: unknown, requestId: string = randomUUID()): Response {
  if (isAppError(e)) return appErrorResponse(e, requestId);
  if (isDatabaseUnavailable(e)) {
    // overload or a restarting database is not the caller's fault, and not a bug: say when to retry
    logger.warn("database unavailable", { requestId, error: e instanceof Error ? e.message : String(e) });
    return appErrorResponse(unavailable("The service is busy or restarting; try again in a few seconds"), requestId, "5");
  }
  logger.error("unhandled error", { requestId, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  return Response.json(
    { error: { code: "internal_error", message: "Something went wrong on our side", details: [], request_id: requestId } },
    { status: 500, headers: { "x-request-id": requestId } },
  );
}

function appErrorResponse(e: AppError, requestId: string, retryAfterS?: string): Response {
  const headers: Record<string, string> = { "x-request-id": requestId };
  if (e.code === "rate_limited") headers["retry-after"] = "60";
  if (retryAfterS) headers["retry-after"] = retryAfterS;
  return Response.json(
    { error: { code: e.code, message: e.message, details: e.details, request_id: requestId } },
    { status: HTTP_STATUS[e.code], headers },
  );
}

/** zod issues → API.md's details, each naming the field path (`gpus[2].uuid`). */
export function zodIssuesToDetails(issues: z.core.$ZodIssue[], root?: string): FieldIssue[] {
  return issues.map((issue) => {
    const path = issue.path.reduce<string>(
      (acc, seg) => (typeof seg === "number" ? `${acc}[${seg}]` : acc ? `${acc}.${String(seg)}` : String(seg)),
      "",
    );
    let message = issue.message;
    if (issue.code === "unrecognized_keys") message = `Unknown field(s): ${issue.keys.join(", ")}`;
    return { path: path || root || "body", message };
  });
}
