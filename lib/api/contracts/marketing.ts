import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import { paginationQuery } from "@/lib/http/pagination";
import {
  analyticsJsonSchema,
  analyticsQuery,
  DEMO_REQUEST_STATUSES,
  demoRequestBody,
  demoRequestJsonSchema,
  earlyAccessBody,
  pageviewBody,
  updateDemoRequestBody,
} from "@/lib/marketing/schemas";
import { authErrors, idParams, listOf, notFoundError } from "./common";

const publicErrors = {
  400: { description: "Validation failed; details name each bad field", schema: errorBodySchema },
  429: { description: "Too many requests from this address", schema: errorBodySchema },
} as const;

export const createDemoRequest = defineContract({
  operationId: "createDemoRequest",
  method: "POST",
  path: "/api/demo-requests",
  summary: "Ask for a demo (public; operators are notified)",
  tags: ["Marketing"],
  access: "public",
  body: demoRequestBody,
  bodyLimitBytes: 16 * 1024,
  rateLimitPerMinute: 20,
  responses: {
    201: { description: "Received", schema: z.object({ demo_request: z.object({ id: z.string(), created_at: z.string() }) }) },
    ...publicErrors,
  },
});

export const createEarlyAccess = defineContract({
  operationId: "createEarlyAccess",
  method: "POST",
  path: "/api/early-access",
  summary: "Sign up for early access (public; the answer is the same whether or not the address was already listed)",
  tags: ["Marketing"],
  access: "public",
  body: earlyAccessBody,
  bodyLimitBytes: 4 * 1024,
  rateLimitPerMinute: 20,
  responses: { 201: { description: "Signed up", schema: z.object({ early_access: z.object({ email: z.string() }) }) }, ...publicErrors },
});

export const recordPageView = defineContract({
  operationId: "recordPageView",
  method: "POST",
  path: "/api/analytics/pageview",
  summary: "First-party page view (public; no cookies; Do Not Track and Global Privacy Control are honoured)",
  tags: ["Marketing"],
  access: "public",
  body: pageviewBody,
  bodyLimitBytes: 4 * 1024,
  rateLimitPerMinute: 300,
  responses: {
    202: {
      description: "Accepted; `recorded` is false when the visitor asked not to be tracked",
      schema: z.object({ recorded: z.boolean() }),
    },
    ...publicErrors,
  },
});

export const listDemoRequests = defineContract({
  operationId: "listDemoRequests",
  method: "GET",
  path: "/api/demo-requests",
  summary: "The demo-request inbox, newest first",
  tags: ["Marketing"],
  access: ["operator"],
  query: z.strictObject({ ...paginationQuery, status: z.enum(DEMO_REQUEST_STATUSES).optional() }),
  responses: { 200: { description: "Demo requests", schema: listOf(demoRequestJsonSchema) }, ...authErrors },
});

export const updateDemoRequest = defineContract({
  operationId: "updateDemoRequest",
  method: "PATCH",
  path: "/api/demo-requests/{id}",
  summary: "Mark a demo request contacted or closed",
  tags: ["Marketing"],
  access: ["operator"],
  params: idParams,
  body: updateDemoRequestBody,
  responses: {
    200: { description: "Updated", schema: z.object({ demo_request: demoRequestJsonSchema }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const getSiteAnalytics = defineContract({
  operationId: "getSiteAnalytics",
  method: "GET",
  path: "/api/analytics/summary",
  summary: "Page views per day, top pages, referrers and demo-request conversion",
  tags: ["Marketing"],
  access: ["operator"],
  query: analyticsQuery,
  responses: { 200: { description: "Analytics", schema: analyticsJsonSchema }, ...authErrors },
});
