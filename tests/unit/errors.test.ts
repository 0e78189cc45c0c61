import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError, HTTP_STATUS, conflict, notFound, validationFailed } from "@/lib/errors";
import pg from "pg";
import { Prisma } from "@/lib/generated/prisma/client";
import { errorResponse, zodIssuesToDetails } from "@/lib/http/error-response";

describe("error vocabulary", () => {
  it("maps every code to the status API.md names", () => {
    expect(HTTP_STATUS).toMatchObject({
      validation_failed: 400,
      unauthorized: 401,
      forbidden: 403,
      not_found: 404,
      conflict: 409,
      invalid_transition: 409,
      payload_too_large: 413,
      unsatisfiable: 422,
      nothing_to_invoice: 422,
      rate_limited: 429,
    });
  });

  it("renders the JSON error shape with details and a request id", async () => {
    const res = errorResponse(validationFailed([{ path: "gpu_quota", message: "bad" }]), "req-1");
    expect(res.status).toBe(400);
    expect(res.headers.get("x-request-id")).toBe("req-1");
    expect(await res.json()).toEqual({
      error: {
        code: "validation_failed",
        message: "Request validation failed",
        details: [{ path: "gpu_quota", message: "bad" }],
        request_id: "req-1",
      },
    });
    expect((await errorResponse(notFound("Tenant")).json()).error.message).toBe("Tenant not found");
    expect(errorResponse(conflict("dup")).status).toBe(409);
  });

  it("answers 503 with a retry time when the database is busy or restarting, not 500", async () => {
    // a real connection refused by a port nobody listens on
    const refused = await new pg.Client({ host: "127.0.0.1", port: 1, connectionTimeoutMillis: 2_000 }).connect().catch((e: unknown) => e);
    const restarting = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    const noTransaction = new Prisma.PrismaClientKnownRequestError(
      "Transaction API error: Unable to start a transaction in the given time.",
      { code: "P2028", clientVersion: Prisma.prismaVersion.client },
    );
    const poolTimeout = new Error("timeout exceeded when trying to connect");
    for (const e of [refused, restarting, noTransaction, poolTimeout]) {
      const res = errorResponse(e, "req-3");
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      const body = await res.json();
      expect(body.error).toMatchObject({ code: "unavailable", request_id: "req-3" });
      expect(JSON.stringify(body)).not.toMatch(/administrator|P2028|127\.0\.0\.1/);
    }
    // a statement the database refused for what it says is still the server's own 500
    expect(errorResponse(Object.assign(new Error("division by zero"), { code: "22012" })).status).toBe(500);
  });

  it("answers an AppError from another copy of the errors module (a second server layer in the bundle) with its own status", async () => {
    const fromOtherCopy = Object.assign(new Error("Send a key"), { name: "AppError", code: "unauthorized", details: [] });
    expect(errorResponse(fromOtherCopy).status).toBe(401);
    // the name alone is not enough
    expect(errorResponse(Object.assign(new Error("x"), { name: "AppError", code: "nonsense", details: [] })).status).toBe(500);
  });

  it("never leaks a stack trace or message of an unexpected error", async () => {
    const res = errorResponse(new Error("password=hunter2 at db.ts:42"), "req-2");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("db.ts");
    expect(JSON.parse(text).error.code).toBe("internal_error");
  });

  it("names nested field paths from zod issues", () => {
    const schema = z.strictObject({ gpus: z.array(z.object({ uuid: z.string() })), n: z.number() });
    const r = schema.safeParse({ gpus: [{ uuid: "a" }, { uuid: 3 }], n: "x", extra: true });
    expect(r.success).toBe(false);
    const paths = zodIssuesToDetails(r.error!.issues).map((d) => d.path);
    expect(paths).toContain("gpus[1].uuid");
    expect(paths).toContain("n");
    expect(zodIssuesToDetails(r.error!.issues).find((d) => d.message.includes("extra"))?.path).toBe("body");
  });

  it("keeps AppError distinguishable from other errors", () => {
    expect(new AppError("conflict", "x")).toBeInstanceOf(Error);
  });
});
