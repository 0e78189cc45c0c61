import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { repliesFor } from "@/lib/http/reply";

// A handler answers through `reply`/`send`, typed by its contract. The @ts-expect-error lines are
// the compile-time half of this test: typecheck fails if any of them stops being an error.

const contract = defineContract({
  operationId: "getThing",
  method: "GET",
  path: "/api/things/{id}",
  summary: "A thing",
  tags: ["test"],
  access: ["operator"],
  responses: {
    200: {
      description: "The thing",
      schema: z.object({ thing: z.object({ id: z.string(), created_at: z.string(), tags: z.array(z.object({ name: z.string() })) }) }),
    },
    204: { description: "Nothing" },
    202: { description: "As CSV", schema: z.string(), mediaType: "text/csv" },
  },
});

const { reply, send } = repliesFor<typeof contract>();
const thing = { id: "a", created_at: "2026-12-01T00:00:00.000Z", tags: [{ name: "x" }] };

describe("typed replies", () => {
  it("answers JSON with the status and body given", async () => {
    const { response } = reply(200, { thing }, { etag: '"1"' });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("etag")).toBe('"1"');
    expect(await response.json()).toEqual({ thing });
  });

  it("sends bodies that are not JSON, and refuses a ready response of another status", async () => {
    expect(send(204).response.status).toBe(204);
    const csv = send(202, "a,b\r\n", { "content-type": "text/csv" }).response;
    expect([csv.status, csv.headers.get("content-type"), await csv.text()]).toEqual([202, "text/csv", "a,b\r\n"]);
    expect(send(202, new Response("x", { status: 202 })).response.status).toBe(202);
    expect(() => send(202, new Response("x", { status: 200 }))).toThrow(/a 200 response sent as 202/);
  });

  it("refuses at compile time what the contract does not promise", () => {
    const built = { ...thing, secret: "s" };
    const refused = [
      // @ts-expect-error 201 is not a status the contract lists
      () => reply(201, { thing }),
      // @ts-expect-error 204 has no JSON body: it is sent, not replied
      () => reply(204, {}),
      // @ts-expect-error a CSV status is sent, not replied as JSON
      () => reply(202, "a,b"),
      // @ts-expect-error 200 has a JSON schema: it is replied, not sent
      () => send(200, "{}"),
      // @ts-expect-error a Date is not the ISO string the document promises
      () => reply(200, { thing: { ...thing, created_at: new Date() } }),
      // @ts-expect-error a field the schema does not declare, in a literal
      () => reply(200, { thing: { ...thing, secret: "s" } }),
      // @ts-expect-error a field the schema does not declare, in a value built elsewhere
      () => reply(200, { thing: built }),
      // @ts-expect-error the same, nested in an array
      () => reply(200, { thing: { ...thing, tags: [{ name: "x", colour: "red" }] } }),
    ];
    expect(refused).toHaveLength(8);
  });
});
