import { beforeAll, describe, expect, it } from "vitest";
import { api, expectErrorShape } from "../support/http";
import { makeKey } from "../support/fixtures";
import { buildWorld, operationCases, type World } from "./world";
import { callerAuditCount } from "../support/caller-audit";

// Every write operation in the OpenAPI document gets the same battery of bad inputs, generated
// from its own request schema: malformed JSON, empty or non-object bodies, oversized bodies,
// unknown fields, each field with the wrong type, each required field missing, each enum with
// an unknown value. Each must answer 4xx in the documented error shape, naming the field, and
// write nothing. The valid body must then succeed, so the refusals are about the input.

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  $ref?: string;
};
type Op = {
  operationId: string;
  "x-gpuforge-body-limit-bytes"?: number;
  requestBody?: { content: { "application/json": { schema: JsonSchema } } };
  parameters?: Array<{ name: string; in: string }>;
};
type Doc = { paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, JsonSchema> } };

let doc: Doc;
let world: World;

beforeAll(async () => {
  doc = (await api("GET", "/api/openapi.json")).body;
  world = await buildWorld();
});

const resolve = (s: JsonSchema): JsonSchema => (s.$ref ? doc.components.schemas[s.$ref.split("/").pop()!]! : s);
const typesOf = (s: JsonSchema): string[] => {
  const r = resolve(s);
  if (r.anyOf) return r.anyOf.flatMap(typesOf);
  return Array.isArray(r.type) ? r.type : r.type ? [r.type] : [];
};
const wrongValueFor = (s: JsonSchema): unknown => {
  const t = typesOf(s);
  if (t.includes("string")) return 12345;
  if (t.includes("integer") || t.includes("number")) return "not-a-number";
  if (t.includes("boolean")) return "yes";
  return 42;
};

function writeOperations() {
  const out: Array<{ method: string; path: string; op: Op }> = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) if (op.requestBody) out.push({ method: method.toUpperCase(), path, op });
  }
  return out;
}

async function expectRefused(
  label: string,
  failures: string[],
  call: () => Promise<{ status: number; body: unknown }>,
  status: number,
  code: string,
  field?: string,
) {
  const before = await callerAuditCount();
  const reply = await call();
  if (reply.status !== status) {
    failures.push(`${label}: got ${reply.status}, want ${status} ${JSON.stringify(reply.body).slice(0, 200)}`);
    return;
  }
  try {
    expectErrorShape(reply as never, code);
  } catch (e) {
    failures.push(`${label}: ${(e as Error).message}`);
  }
  const details = (reply.body as { error: { details: Array<{ path: string }> } }).error.details;
  if (field && !details.some((d) => d.path === field)) failures.push(`${label}: details do not name ${field}: ${JSON.stringify(details)}`);
  if ((await callerAuditCount()) !== before) failures.push(`${label}: refused but something was written`);
}

describe("bad input on every write route", () => {
  it("has at least the foundation's write routes", () => {
    expect(writeOperations().map((w) => w.op.operationId)).toEqual(
      expect.arrayContaining(["createTenant", "updateTenant", "createApiKey", "createUser", "updateUser", "createCluster"]),
    );
  });

  it("refuses malformed, empty, non-object, oversized and unknown-field bodies", async () => {
    const cases = operationCases(world);
    const failures: string[] = [];
    for (const { method, op } of writeOperations()) {
      const c = cases[op.operationId]!;
      const key = world.keys[c.caller ?? "operator"]!;
      const target = await c.path();
      const label = (what: string) => `${op.operationId} ${what}`;
      await expectRefused(
        label("malformed JSON"),
        failures,
        () => api(method, target, { key, rawBody: '{"name": ', headers: { "content-type": "application/json" } }),
        400,
        "validation_failed",
        "body",
      );
      await expectRefused(label("empty body"), failures, () => api(method, target, { key, rawBody: "" }), 400, "validation_failed", "body");
      await expectRefused(label("array body"), failures, () => api(method, target, { key, body: [c.body!()] }), 400, "validation_failed");
      await expectRefused(label("string body"), failures, () => api(method, target, { key, body: "hello" }), 400, "validation_failed");
      const limit = op["x-gpuforge-body-limit-bytes"];
      if (!limit) failures.push(`${op.operationId}: the document does not state its body limit`);
      await expectRefused(
        label("oversized body"),
        failures,
        () => api(method, target, { key, body: { ...c.body!(), padding: "x".repeat((limit ?? 1 << 20) + 1) } }),
        413,
        "payload_too_large",
      );
      // 20,000 levels in 40 KB (fewer where the route takes less): the body reader refuses it before the NUL check or zod walk it
      const levels = Math.min(20_000, Math.floor(((limit ?? 1 << 20) - 2) / 2));
      await expectRefused(
        label("deeply nested JSON"),
        failures,
        () =>
          api(method, target, { key, rawBody: "[".repeat(levels) + "]".repeat(levels), headers: { "content-type": "application/json" } }),
        400,
        "validation_failed",
        "body",
      );
      await expectRefused(
        label("unknown field"),
        failures,
        () => api(method, target, { key, body: { ...c.body!(), surprise: 1 } }),
        400,
        "validation_failed",
        "body",
      );
    }
    expect(failures).toEqual([]);
  });

  it("names each field sent with the wrong type, each required field missing, and each unknown enum value", async () => {
    const cases = operationCases(world);
    const failures: string[] = [];
    for (const { method, op } of writeOperations()) {
      const c = cases[op.operationId]!;
      const key = world.keys[c.caller ?? "operator"]!;
      const schema = resolve(op.requestBody!.content["application/json"].schema);
      for (const [field, prop] of Object.entries(schema.properties ?? {})) {
        const target = await c.path();
        await expectRefused(
          `${op.operationId}.${field} wrong type`,
          failures,
          () => api(method, target, { key, body: { ...c.body!(), [field]: wrongValueFor(prop) } }),
          400,
          "validation_failed",
          field,
        );
        if (resolve(prop).enum || resolve(prop).anyOf?.some((s) => resolve(s).enum)) {
          await expectRefused(
            `${op.operationId}.${field} unknown enum value`,
            failures,
            () => api(method, target, { key, body: { ...c.body!(), [field]: "bogus_value" } }),
            400,
            "validation_failed",
            field,
          );
        }
      }
      for (const field of schema.required ?? []) {
        const target = await c.path();
        const body = c.body!();
        delete body[field];
        await expectRefused(
          `${op.operationId} missing ${field}`,
          failures,
          () => api(method, target, { key, body }),
          400,
          "validation_failed",
          field,
        );
      }
      const valid = await api(method, await c.path(), { key, body: c.body!() });
      if (c.validStatus !== undefined) {
        if (valid.status !== c.validStatus)
          failures.push(
            `${op.operationId}: the valid body answered ${valid.status}, want ${c.validStatus} ${JSON.stringify(valid.body).slice(0, 200)}`,
          );
      } else if (valid.status >= 300)
        failures.push(`${op.operationId}: the valid body itself failed with ${valid.status} ${JSON.stringify(valid.body).slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });

  it("refuses malformed ids in paths and out-of-range list parameters, naming them", async () => {
    const failures: string[] = [];
    const cases = operationCases(world);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const key = world.keys[cases[op.operationId]?.caller ?? "operator"]!;
        if (path.includes("{id}")) {
          const body = op.requestBody ? operationCases(world)[op.operationId]!.body!() : undefined;
          await expectRefused(
            `${op.operationId} bad id`,
            failures,
            () => api(method.toUpperCase(), path.replace("{id}", "not-an-id"), { key, body }),
            400,
            "validation_failed",
            "id",
          );
        }
        if (op.parameters?.some((p) => p.name === "limit")) {
          // a well-formed id, so the query is what is judged
          const listPath = path.replace("{id}", "00000000-0000-4000-8000-000000000000");
          for (const limit of ["0", "501", "ten"]) {
            await expectRefused(
              `${op.operationId} limit=${limit}`,
              failures,
              () => api("GET", `${listPath}?limit=${limit}`, { key }),
              400,
              "validation_failed",
              "limit",
            );
          }
          // a cursor this list never handed out: forged ids, times PostgreSQL cannot hold, numbers beyond bigint
          if (op.parameters?.some((p) => p.name === "cursor"))
            for (const cursor of [
              Buffer.from("2026-01-02T03:04:05.678Z|not-a-uuid").toString("base64url"),
              Buffer.from("+275760-09-13T00:00:00.000Z|00000000-0000-4000-8000-000000000000").toString("base64url"),
              "9".repeat(40),
            ])
              await expectRefused(
                `${op.operationId} cursor=${cursor.slice(0, 12)}…`,
                failures,
                () => api("GET", `${listPath}?cursor=${cursor}`, { key }),
                400,
                "validation_failed",
                "cursor",
              );
          await expectRefused(
            `${op.operationId} unknown query`,
            failures,
            () => api("GET", `${listPath}?bogus=1`, { key }),
            400,
            "validation_failed",
          );
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("refuses a cookie-authenticated write that is not JSON (no form-post CSRF)", async () => {
    // Without a session the request is simply unauthorized; the JSON rule is covered in the browser suite.
    const r = await api("POST", "/api/tenants", {
      rawBody: "name=x&gpu_quota=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(r.status).toBe(401);
  });
});

describe("rate limits", () => {
  it("answers 429 with Retry-After once a caller exceeds an operation's limit, writes nothing, and leaves other callers alone", async () => {
    // createUser allows 60 requests a minute per caller; the limit counts before validation
    const { key } = await makeKey({ scope: "operator" });
    const before = await callerAuditCount();
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await api("POST", "/api/users", { key, body: {} })).status);
    expect(new Set(statuses)).toEqual(new Set([400]));
    const limited = await api("POST", "/api/users", { key, body: {} });
    expect(limited.status).toBe(429);
    expectErrorShape(limited, "rate_limited");
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(await callerAuditCount()).toBe(before);
    const other = await api("POST", "/api/users", { key: world.keys.operator, body: {} });
    expect(other.status).toBe(400);
  });
});
