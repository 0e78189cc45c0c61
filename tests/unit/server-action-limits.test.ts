import { describe, expect, it, vi } from "vitest";
import { z } from "zod";

// The action wrapper with Next's request scope stood in for: a signed-in tenant admin, one address.
vi.mock("next/headers", () => ({ headers: async () => new Headers({ "x-forwarded-for": "203.0.113.10" }) }));
vi.mock("next/cache", () => ({ revalidatePath: () => {} }));
const session = vi.hoisted(() => ({
  principal: { kind: "tenant", tenantId: "00000000-0000-4000-8000-000000000001", role: "tenant_admin", userId: "00000000-0000-4000-8000-0000000000aa", label: "admin@acme.test" } as unknown,
}));
vi.mock("@/lib/auth/session", () => ({ getSessionPrincipal: async () => session.principal }));

const { ACTION_PER_MINUTE, serverAction } = await import("@/lib/auth/action");

describe("server actions", () => {
  it("are rate-limited per signed-in user, across actions", async () => {
    const run = vi.fn(async () => ({ message: "done" }));
    const a = serverAction({ schema: z.object({}), fromForm: () => ({}), allow: () => true }, run);
    const b = serverAction({ schema: z.object({}), fromForm: () => ({}), allow: () => true }, run);
    const form = new FormData();
    for (let i = 0; i < ACTION_PER_MINUTE; i++) expect((await (i % 2 ? a : b)({}, form)).ok).toBe(true);
    const limited = await a({}, form);
    expect(limited).toMatchObject({ ok: false, message: expect.stringContaining("Too many requests") });
    expect(run).toHaveBeenCalledTimes(ACTION_PER_MINUTE);
  });

  it("public actions run for an anonymous caller, never as an operator", async () => {
    session.principal = null;
    let kind = "";
    const act = serverAction({ schema: z.object({}), fromForm: () => ({}), allow: "public" }, async (actor) => {
      kind = actor.principal.kind;
      return { message: "ok" };
    });
    expect((await act({}, new FormData())).ok).toBe(true);
    expect(kind).toBe("anonymous");
  });
});
