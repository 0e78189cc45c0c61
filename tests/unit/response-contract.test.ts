import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { responseContractProblems } from "@/lib/http/response-contract";

// The check the route wrapper runs in the test stages (VALIDATE_RESPONSES): a response must be a
// status its contract lists, with a body its schema accepts and nothing the schema does not declare.

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
      schema: z.object({ thing: z.object({ id: z.string(), tags: z.array(z.object({ name: z.string() })) }) }),
    },
    204: { description: "Nothing" },
    202: { description: "As CSV", schema: z.string(), mediaType: "text/csv" },
  },
});

describe("responseContractProblems", () => {
  it("accepts a response that is what the contract promises", async () => {
    expect(await responseContractProblems(contract, Response.json({ thing: { id: "a", tags: [{ name: "x" }] } }))).toEqual([]);
    expect(await responseContractProblems(contract, new Response(null, { status: 204 }))).toEqual([]);
    expect(
      await responseContractProblems(
        contract,
        new Response("a,b\r\n", { status: 202, headers: { "content-type": "text/csv; charset=utf-8" } }),
      ),
    ).toEqual([]);
  });

  it("names a status the contract does not list, a wrong media type, a wrong field and an undeclared one", async () => {
    expect(await responseContractProblems(contract, Response.json({}, { status: 201 }))).toEqual([
      { path: "status", message: expect.stringMatching(/201 is not one of the statuses the contract lists \(200, 202, 204\)/) },
    ]);
    expect(await responseContractProblems(contract, Response.json("a,b", { status: 202 }))).toEqual([
      { path: "content-type", message: expect.stringMatching(/text\/csv was promised/) },
    ]);
    expect(await responseContractProblems(contract, Response.json({ thing: { id: 7, tags: [] } }))).toEqual([
      { path: expect.stringMatching(/thing\.id$/), message: expect.any(String) },
    ]);
    expect(
      await responseContractProblems(contract, Response.json({ thing: { id: "a", secret: "s", tags: [{ name: "x", extra: 1 }] } })),
    ).toEqual([
      { path: "response.thing.secret", message: "sent, but not in the contract's schema" },
      { path: "response.thing.tags[0].extra", message: "sent, but not in the contract's schema" },
    ]);
  });

  it("leaves the response readable by its client", async () => {
    const response = Response.json({ thing: { id: "a", tags: [] } });
    await responseContractProblems(contract, response);
    expect(await response.json()).toEqual({ thing: { id: "a", tags: [] } });
  });
});
