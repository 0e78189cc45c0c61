import { describe, expect, it } from "vitest";
import { parseEventPayload, readBackgroundEvent } from "@/lib/background/events";

// Events that arrive from outside the process (Inngest, another process's NOTIFY) reach a job only
// when their name is in the catalogue and their data matches that name's schema.

describe("background events", () => {
  it("reads an event of the catalogue with its payload", () => {
    expect(readBackgroundEvent({ name: "scheduler/run.requested", data: { reason: "job submitted" } })).toEqual({
      name: "scheduler/run.requested",
      data: { reason: "job submitted" },
    });
    expect(readBackgroundEvent({ name: "alerts/notifications.queued", data: { count: 3 } })).toEqual({
      name: "alerts/notifications.queued",
      data: { count: 3 },
    });
  });

  it("reads Inngest's own events (a cron tick), unknown names and mismatched data as no event", () => {
    expect(readBackgroundEvent({ name: "inngest/scheduled.timer", data: { cron: "* * * * *" } })).toBeUndefined();
    expect(readBackgroundEvent({ name: "toString", data: {} })).toBeUndefined();
    expect(readBackgroundEvent({ name: "platform/tenant.suspended", data: { tenant_id: 42 } })).toBeUndefined();
    expect(readBackgroundEvent({ name: "alerts/notifications.queued", data: { count: 1.5 } })).toBeUndefined();
    expect(readBackgroundEvent({ data: { reason: "x" } })).toBeUndefined();
  });

  it("refuses a payload that does not match its event's schema", () => {
    expect(parseEventPayload("platform/tenant.suspended", { tenant_id: "t1" })).toEqual({ tenant_id: "t1" });
    expect(() => parseEventPayload("platform/tenant.suspended", { tenant_id: 42 })).toThrow();
  });
});
