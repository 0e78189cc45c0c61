import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { createDemoRequest, recordPageView, signUpEarlyAccess, updateDemoRequest } from "@/lib/marketing/site";
import { actorFor, operatorPrincipal, tenantAdminPrincipal, unique } from "../support/fixtures";

describe("public site records", () => {
  it("early access: signing up twice is not an error and adds nothing", async () => {
    const email = `${unique("early")}@example.test`;
    await signUpEarlyAccess(email);
    await signUpEarlyAccess(email);
    expect(await db().earlyAccess.count({ where: { email } })).toBe(1);
  });

  it("a demo request is announced through the outbox; only operators handle it", async () => {
    const r = await createDemoRequest(
      { name: "Ada", email: `${unique("ada")}@example.test`, company: "Engines" },
      { emailFrom: "x@test", emailTo: [], publicUrl: "http://site.test" },
    );
    const notes = await db().notification.findMany({ where: { demoRequestId: r.id } });
    expect(notes).toEqual([
      expect.objectContaining({
        kind: "demo_request",
        channel: "console",
        status: "sent",
        subject: "[GPUForge] Demo request from Ada (Engines)",
      }),
    ]);
    expect(notes[0]!.body).toContain("http://site.test/admin/demo-requests");
    await expect(updateDemoRequest(actorFor(tenantAdminPrincipal(r.id)), r.id, "closed")).rejects.toMatchObject({ code: "forbidden" });
    expect(await updateDemoRequest(actorFor(operatorPrincipal), r.id, "contacted")).toMatchObject({
      status: "contacted",
      handledBy: "test operator",
    });
    expect(await updateDemoRequest(actorFor(operatorPrincipal), r.id, "new")).toMatchObject({
      status: "new",
      handledBy: null,
      handledAt: null,
    });
  });

  it("a page view keeps the path without its query and only the referring host", async () => {
    const path = `/blog/${unique("post")}`;
    await recordPageView(
      { path: `${path}?utm_source=x#top`, referrer: "https://news.example.com/item?id=1" },
      { ip: "203.0.113.5", userAgent: "UA", host: "gpuforge.test" },
    );
    await recordPageView({ path, referrer: "https://gpuforge.test/" }, { ip: "203.0.113.5", userAgent: "UA", host: "gpuforge.test" });
    const rows = await db().pageView.findMany({ where: { path }, orderBy: { id: "asc" } });
    expect(rows.map((r) => r.referrerHost)).toEqual(["news.example.com", null]);
    expect(rows[0]!.sessionHash).toBe(rows[1]!.sessionHash);
    expect(rows[0]!.sessionHash).not.toContain("203.0.113.5");
  });
});
