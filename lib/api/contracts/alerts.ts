import { z } from "zod";
import {
  alertJsonSchema,
  alertListParams,
  createRuleBody,
  listAlertsQuery,
  listNotificationsQuery,
  notificationListParams,
  listRemediationsQuery,
  notificationJsonSchema,
  remediationCapSchema,
  remediationJsonSchema,
  ruleJsonSchema,
  updateRuleBody,
} from "@/lib/alerts/schemas";
import { defineContract } from "@/lib/http/contract";
import { authErrors, conflictError, idParams, listOf, notFoundError } from "./common";

const ruleReply = z.object({ rule: ruleJsonSchema });
const alertReply = z.object({ alert: alertJsonSchema });

export const listAlertRules = defineContract({
  operationId: "listAlertRules",
  method: "GET",
  path: "/api/alerts/rules",
  summary: "Every alert rule with how many of its events fire now (rules are few: one page, next_cursor is always null)",
  tags: ["Alerts"],
  access: ["operator"],
  responses: { 200: { description: "Rules", schema: listOf(ruleJsonSchema) }, ...authErrors },
});

export const createAlertRule = defineContract({
  operationId: "createAlertRule",
  method: "POST",
  path: "/api/alerts/rules",
  summary: "Add an alert rule, fleet-wide or for one cluster",
  tags: ["Alerts"],
  access: ["operator"],
  body: createRuleBody,
  responses: { 201: { description: "Created", schema: ruleReply }, ...authErrors, ...conflictError },
});

export const updateAlertRule = defineContract({
  operationId: "updateAlertRule",
  method: "PATCH",
  path: "/api/alerts/rules/{id}",
  summary: "Tune, enable or disable a rule (disabling resolves its events)",
  tags: ["Alerts"],
  access: ["operator"],
  params: idParams,
  body: updateRuleBody,
  responses: { 200: { description: "Updated", schema: ruleReply }, ...authErrors, ...notFoundError, ...conflictError },
});

export const listAlerts = defineContract({
  operationId: "listAlerts",
  method: "GET",
  path: "/api/alerts",
  summary: "Alert events, newest first, with details (a tenant sees those about its own jobs)",
  tags: ["Alerts"],
  access: ["operator", "tenant"],
  query: listAlertsQuery,
  responses: { 200: { description: "Alert events", schema: listOf(alertJsonSchema) }, ...authErrors },
});

export const getAlert = defineContract({
  operationId: "getAlert",
  method: "GET",
  path: "/api/alerts/{id}",
  summary: "One alert event",
  tags: ["Alerts"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "The alert", schema: alertReply }, ...authErrors, ...notFoundError },
});

export const acknowledgeAlert = defineContract({
  operationId: "acknowledgeAlert",
  method: "POST",
  path: "/api/alerts/{id}/acknowledge",
  summary: "Take an alert (records who and when; acknowledging again keeps the first)",
  tags: ["Alerts"],
  access: ["operator"],
  params: idParams,
  responses: { 200: { description: "Acknowledged", schema: alertReply }, ...authErrors, ...notFoundError },
});

export const listNotifications = defineContract({
  operationId: "listNotifications",
  method: "GET",
  path: "/api/notifications",
  summary: "The notification outbox with each delivery's status",
  tags: ["Alerts"],
  access: ["operator"],
  query: listNotificationsQuery,
  responses: { 200: { description: "Notifications", schema: listOf(notificationJsonSchema) }, ...authErrors },
});

export const retryNotification = defineContract({
  operationId: "retryNotification",
  method: "POST",
  path: "/api/notifications/{id}/retry",
  summary: "Deliver a failed or waiting notification again now",
  tags: ["Alerts"],
  access: ["operator"],
  params: idParams,
  responses: {
    200: { description: "Queued", schema: z.object({ notification: notificationJsonSchema }) },
    ...authErrors,
    ...notFoundError,
    ...conflictError,
  },
});

export const listRemediations = defineContract({
  operationId: "listRemediations",
  method: "GET",
  path: "/api/remediations",
  summary: "Automatic quarantines and capped decisions, with the cap as it stands",
  tags: ["Alerts"],
  access: ["operator"],
  query: listRemediationsQuery,
  responses: {
    200: { description: "Remediations", schema: listOf(remediationJsonSchema).extend({ cap: remediationCapSchema }) },
    ...authErrors,
  },
});

export const exportAlerts = defineContract({
  operationId: "exportAlerts",
  method: "GET",
  path: "/api/alerts/export",
  summary: "Alerts matching the console's filters (search, status, severity, type, fired from/to) as CSV, one row per alert, up to 10,000",
  tags: ["Alerts"],
  access: ["operator", "tenant"],
  query: alertListParams,
  responses: {
    200: { description: "The rows as CSV (RFC 4180), a header line first", schema: z.string(), mediaType: "text/csv" },
    ...authErrors,
  },
});

export const exportNotifications = defineContract({
  operationId: "exportNotifications",
  method: "GET",
  path: "/api/notifications/export",
  summary:
    "The notification outbox matching the console's filters (search, status, channel, kind, created from/to) as CSV, up to 10,000 rows",
  tags: ["Alerts"],
  access: ["operator"],
  query: notificationListParams,
  responses: {
    200: { description: "The rows as CSV (RFC 4180), a header line first", schema: z.string(), mediaType: "text/csv" },
    ...authErrors,
  },
});
