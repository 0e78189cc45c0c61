import { describe, expect, it } from "vitest";
import { aboutTenant } from "@/lib/jobs/operator-voice";

// An operator reads every tenant's waiting reasons: about the tenant, by name (issue 32).
describe("a waiting reason as an operator reads it", () => {
  it("speaks about the tenant, never to the operator as if they were the tenant", () => {
    expect(aboutTenant("Quota: your organisation holds 39 of its 64 GPUs; this job needs 8", "Acme AI")).toBe(
      "Quota: Acme AI holds 39 of its 64 GPUs; this job needs 8",
    );
    expect(aboutTenant("Billing: your prepaid balance is used up; add funds and it runs", "Orbital Labs")).toBe(
      "Billing: Orbital Labs's prepaid balance is used up; it runs once funds arrive",
    );
    expect(aboutTenant("Your organisation is suspended; this job runs again once it is reactivated", "Helix Bio")).toBe(
      "Helix Bio is suspended; this job runs again once it is reactivated",
    );
    expect(aboutTenant("Requeued: node lost; your retries were not spent", "Acme AI")).toBe(
      "Requeued: node lost; its retries were not spent",
    );
  });

  it("leaves reasons that speak of no one as they are", () => {
    expect(aboutTenant("Waiting for the next scheduling cycle", "Acme AI")).toBe("Waiting for the next scheduling cycle");
    expect(aboutTenant(null, "Acme AI")).toBeNull();
  });
});
