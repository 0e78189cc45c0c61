import { describe, expect, it, vi } from "vitest";
import { z } from "zod";

// The action wrapper with Next's request scope stood in for: one visitor address, a session that
// may be one whose role must enrol a second factor first.
vi.mock("next/headers", () => ({ headers: async () => new Headers({ "x-forwarded-for": "203.0.113.77" }) }));
vi.mock("next/cache", () => ({ revalidatePath: () => {} }));
const session = vi.hoisted(() => ({ principal: null as unknown }));
vi.mock("@/lib/auth/session", () => ({ getSessionPrincipal: async () => session.principal }));

const { serverAction } = await import("@/lib/auth/action");

describe("public forms", () => {
  it("count every submission against the address's limit, refused ones included, and run nothing refused", async () => {
    const run = vi.fn(async () => ({ message: "sent" }));
    const form = serverAction(
      {
        schema: z.object({ email: z.email() }),
        fromForm: (f) => ({ email: f.get("email") }),
        access: "public",
        rateLimit: { key: "unit-public-form", perMinute: 5 },
      },
      run,
    );
    const bad = new FormData();
    bad.set("email", "not-an-address");
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await form({}, bad));
    expect(answers.every((a) => a.message === "Check the highlighted fields.")).toBe(true);
    const good = new FormData();
    good.set("email", "ada@example.com");
    expect(await form({}, good)).toMatchObject({ ok: false, message: expect.stringContaining("Too many requests") });
    expect(run).not.toHaveBeenCalled();
  });
});

describe("a session that must enrol a second factor", () => {
  it("may run the enrolment actions and nothing else", async () => {
    session.principal = { kind: "operator", userId: "00000000-0000-4000-8000-00000000e001", label: "ops@x.test", mustEnrolTwoFactor: true };
    const run = vi.fn(async () => ({ message: "done" }));
    const other = serverAction({ schema: z.object({}), fromForm: () => ({}), access: ["operator"] }, run);
    const enrol = serverAction({ schema: z.object({}), fromForm: () => ({}), access: ["operator"], duringTwoFactorEnrolment: true }, run);
    expect(await other({}, new FormData())).toMatchObject({ ok: false, message: expect.stringContaining("two-factor") });
    expect(run).not.toHaveBeenCalled();
    expect(await enrol({}, new FormData())).toMatchObject({ ok: true, message: "done" });
    session.principal = { kind: "operator", userId: "00000000-0000-4000-8000-00000000e002", label: "ops2@x.test" };
    expect(await other({}, new FormData())).toMatchObject({ ok: true });
  });
});

describe("the self-service actions' access", () => {
  it("adding funds by card and resetting someone's two-factor sign-in are for tenant admins, not members or operators' tenant-only forms", async () => {
    const { cardDepositAction } = await import("@/app/_actions/billing");
    const { resetTwoFactorAction } = await import("@/app/_actions/accounts");
    const form = new FormData();
    form.set("amount", "25.00");
    form.set("user_id", "00000000-0000-4000-8000-00000000e0ff");
    session.principal = {
      kind: "tenant",
      tenantId: "00000000-0000-4000-8000-00000000e0aa",
      role: "tenant_member",
      userId: "00000000-0000-4000-8000-00000000e003",
      label: "member@x.test",
    };
    expect(await cardDepositAction({}, form)).toMatchObject({ ok: false, message: "You are not allowed to do this." });
    expect(await resetTwoFactorAction({}, form)).toMatchObject({ ok: false, message: "You are not allowed to do this." });
    session.principal = { kind: "operator", userId: "00000000-0000-4000-8000-00000000e004", label: "ops3@x.test" };
    // the card form is the tenant's own (operators open a checkout for a tenant through the API)
    expect(await cardDepositAction({}, form)).toMatchObject({ ok: false, message: "You are not allowed to do this." });
    session.principal = null;
    expect(await cardDepositAction({}, form)).toMatchObject({ ok: false, message: expect.stringContaining("Sign in again") });
  });
});
