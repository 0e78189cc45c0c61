import type { z } from "zod";
import { buildOpenApiDocument } from "@/lib/api/openapi";
import type { SqlClient } from "@/lib/db/client";
import type { Contract } from "@/lib/http/contract";
import type { BodyOf, JsonStatus } from "@/lib/http/reply";
import { capacityFor } from "@/lib/reservations/capacity-facts";
import * as contracts from "./contracts";
import { AppError } from "@/lib/errors";
import { fleetStatus, publicAttestationKeys, publicNodeAttestation, publicRemediations } from "./queries";

// The read-only public API, as a table: each row a GET operation, its contract (query schema and
// replies, for validation and the OpenAPI document) and a handler that gets nothing but a reader
// on the SELECT-only connection and the validated query. There is no row for any other method,
// and no handler can reach a request body, a principal or a writable connection: what this table
// serves is all the listener can do.

export interface PublicRoute<C extends Contract = Contract> {
  contract: C;
  /** the path as a pattern; groups are the path parameters, in order */
  pattern: RegExp;
  /** answers the 200 reply: what its schema accepts when the contract declares one */
  handle(ctx: {
    reader: SqlClient;
    query: z.output<NonNullable<C["query"]>>;
    params: string[];
  }): Promise<200 extends JsonStatus<C> ? BodyOf<C, 200> : unknown>;
}

const route = <C extends Contract>(r: PublicRoute<C>) => r as unknown as PublicRoute;

export const PUBLIC_ROUTES: readonly PublicRoute[] = [
  route({
    contract: contracts.publicCapacity,
    pattern: /^\/v1\/capacity$/,
    handle: async ({ reader, query }) => ({ capacity: await capacityFor(reader, query) }),
  }),
  route({ contract: contracts.publicStatus, pattern: /^\/v1\/status$/, handle: ({ reader }) => fleetStatus(reader) }),
  route({
    contract: contracts.publicRemediations,
    pattern: /^\/v1\/remediations$/,
    handle: async ({ reader, query }) => ({ data: await publicRemediations(reader, query) }),
  }),
  route({
    contract: contracts.publicAttestation,
    pattern: /^\/v1\/nodes\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/attestation$/,
    handle: async ({ reader, params }) => {
      const attestation = await publicNodeAttestation(reader, params[0]!);
      if (!attestation) throw new AppError("not_found", "This node has no attestation verdict");
      return { attestation };
    },
  }),
  route({
    contract: contracts.publicAttestationKeys,
    pattern: /^\/v1\/attestation\/keys$/,
    handle: ({ reader }) => publicAttestationKeys(reader),
  }),
  route({ contract: contracts.publicOpenApi, pattern: /^\/v1\/openapi\.json$/, handle: async () => publicOpenApiDocument() }),
];

let doc: unknown;
function publicOpenApiDocument() {
  doc ??= buildOpenApiDocument(
    PUBLIC_ROUTES.map((r) => r.contract),
    "/",
  );
  return doc;
}
