import { describe, expect, it, vi } from "vitest";
import { z } from "zod";

// The action wrapper with Next's request scope stood in for: a signed-in tenant admin, one address.
vi.mock("next/headers", () => ({ headers: async () => new Headers({ "x-forwarded-for": "203.0.113.10" }) }));
vi.mock("next/cache", () => ({ revalidatePath: () => {} }));
const session = vi.hoisted(() => ({
  principal: {
    kind: "tenant",
    tenantId: "00000000-0000-4000-8000-000000000001",
    role: "tenant_admin",
    userId: "00000000-0000-4000-8000-0000000000aa",
    label: "admin@acme.test",
  } as unknown,
}));
vi.mock("@/lib/auth/session", () => ({ getSessionPrincipal: async () => session.principal }));
// a real operator action's use case, so a refusal can be seen not to reach it
const changeNodeStatus = vi.hoisted(() => vi.fn(async () => ({ hostname: "gpu-1", status: "maintenance" })));
vi.mock("@/lib/fleet/change-node-status", () => ({ changeNodeStatus }));
const revokeEndpointKey = vi.hoisted(() => vi.fn(async () => ({ name: "ci", prefix: "gfe_ab" })));
vi.mock("@/lib/endpoints/endpoint-keys", () => ({ revokeEndpointKey, createEndpointKey: vi.fn() }));

const { ACTION_PER_MINUTE, serverAction } = await import("@/lib/auth/action");
const { changeNodeStatusAction } = await import("@/app/_actions/nodes");
const { revokeEndpointKeyAction } = await import("@/app/_actions/endpoints");

const tenantAdmin = session.principal;
// the first test spends this admin's budget of submissions: the others sign in as someone else
const otherAdmin = { ...(tenantAdmin as object), userId: "00000000-0000-4000-8000-0000000000ab" };
const tenantMember = { ...(tenantAdmin as object), role: "tenant_member", userId: "00000000-0000-4000-8000-0000000000bb" };
const operator = { kind: "operator", userId: "00000000-0000-4000-8000-0000000000cc", label: "ops@gpuforge.test" };
const none = z.object({});

describe("server actions", () => {
  it("are rate-limited per signed-in user, across actions", async () => {
    const run = vi.fn(async () => ({ message: "done" }));
    const a = serverAction({ schema: none, fromForm: () => ({}), access: ["tenant"] }, run);
    const b = serverAction({ schema: none, fromForm: () => ({}), access: ["tenant"] }, run);
    const form = new FormData();
    for (let i = 0; i < ACTION_PER_MINUTE; i++) expect((await (i % 2 ? a : b)({}, form)).ok).toBe(true);
    const limited = await a({}, form);
    expect(limited).toMatchObject({ ok: false, message: expect.stringContaining("Too many requests") });
    expect(run).toHaveBeenCalledTimes(ACTION_PER_MINUTE);
  });

  it("echo a refused form's fields, but never its passwords, secret URLs or a secret's value", async () => {
    session.principal = operator;
    const act = serverAction(
      { schema: z.object({ name: z.string().min(3) }), fromForm: (f) => ({ name: f.get("name") }), access: ["operator"] },
      async () => ({ message: "ok" }),
    );
    const form = new FormData();
    for (const [k, v] of Object.entries({
      name: "x",
      password: "hunter22",
      smtp_url: "smtp://u:p@mail",
      webhook_url: "https://hooks/secret",
      value: "s3cr3t",
      note: "kept",
    }))
      form.set(k, v);
    const refused = await act({}, form);
    expect(refused.ok).toBe(false);
    expect(refused.values).toEqual({ name: "x", note: "kept" });
  });

  it("public actions run for an anonymous caller, never as an operator", async () => {
    session.principal = null;
    let kind = "";
    const act = serverAction({ schema: none, fromForm: () => ({}), access: "public" }, async (actor) => {
      kind = actor.principal.kind;
      return { message: "ok" };
    });
    expect((await act({}, new FormData())).ok).toBe(true);
    expect(kind).toBe("anonymous");
  });

  it("refuse a session of a kind the action does not declare, before its use case runs", async () => {
    session.principal = otherAdmin;
    const form = new FormData();
    form.set("id", "00000000-0000-4000-8000-0000000000dd");
    form.set("status", "maintenance");
    form.set("reason", "swap a fan");
    expect(await changeNodeStatusAction({}, form)).toMatchObject({ ok: false, message: "You are not allowed to do this." });
    expect(changeNodeStatus).not.toHaveBeenCalled();

    session.principal = operator;
    expect(await changeNodeStatusAction({}, form)).toMatchObject({ ok: true, message: "gpu-1 is now maintenance." });
    expect(changeNodeStatus).toHaveBeenCalledTimes(1);
  });

  it("refuse a tenant member an endpoint key change, as the API does, before its use case runs", async () => {
    const form = new FormData();
    form.set("endpoint_id", "00000000-0000-4000-8000-0000000000e1");
    form.set("id", "00000000-0000-4000-8000-0000000000e2");
    session.principal = tenantMember;
    expect(await revokeEndpointKeyAction({}, form)).toMatchObject({ ok: false, message: "You are not allowed to do this." });
    expect(revokeEndpointKey).not.toHaveBeenCalled();
    session.principal = otherAdmin;
    expect((await revokeEndpointKeyAction({}, form)).ok).toBe(true);
    expect(revokeEndpointKey).toHaveBeenCalledTimes(1);
  });

  it("ask tenants for the declared role, and operators for none", async () => {
    const kinds: string[] = [];
    const act = serverAction(
      { schema: none, fromForm: () => ({}), access: ["operator", "tenant"], tenantRole: "tenant_admin" },
      async (actor) => {
        kinds.push(actor.principal.kind);
        return { message: "ok" };
      },
    );
    const tenantOnly = serverAction(
      { schema: none, fromForm: () => ({}), access: ["tenant"], tenantRole: "tenant_admin" },
      async (actor) => ({ message: actor.principal.tenantId }),
    );
    const results = [];
    for (const p of [tenantMember, otherAdmin, operator]) {
      session.principal = p;
      results.push([(await act({}, new FormData())).ok, (await tenantOnly({}, new FormData())).ok]);
    }
    expect(results).toEqual([
      [false, false],
      [true, true],
      [true, false],
    ]);
    expect(kinds).toEqual(["tenant", "operator"]);
  });

  it("refuse a submission nested past the JSON bound before the schema, the NUL check or the use case walks it", async () => {
    session.principal = { ...operator, userId: "00000000-0000-4000-8000-0000000000dd" };
    const run = vi.fn(async () => ({ message: "ran" }));
    const act = serverAction(
      {
        schema: z.object({ spec: z.unknown() }),
        fromForm: (f) => ({ spec: JSON.parse(f.get("spec") as string) as unknown }),
        access: ["operator"],
      },
      run,
    );
    const form = new FormData();
    form.set("spec", "[".repeat(20_000) + "]".repeat(20_000));
    expect(await act({}, form)).toMatchObject({ ok: false, message: expect.stringContaining("nested more than 64 levels deep") });
    expect(run).not.toHaveBeenCalled();
    form.set("spec", JSON.stringify({ steps: [{ request: { body: { messages: [{ role: "user" }] } } }] }));
    expect(await act({}, form)).toMatchObject({ ok: true, message: "ran" });
  });

  it("ask a signed-out caller to sign in again", async () => {
    session.principal = null;
    const run = vi.fn(async () => ({ message: "done" }));
    expect(
      await serverAction({ schema: none, fromForm: () => ({}), access: ["operator", "tenant"] }, run)({}, new FormData()),
    ).toMatchObject({ ok: false, message: expect.stringContaining("Sign in again") });
    expect(run).not.toHaveBeenCalled();
  });

  it("hand the use case the principal narrowed to the declared kinds", () => {
    serverAction({ schema: none, fromForm: () => ({}), access: ["tenant"] }, async (actor) => ({ message: actor.principal.tenantId }));
    // @ts-expect-error an operator principal has no tenant
    serverAction({ schema: none, fromForm: () => ({}), access: ["operator"] }, async (actor) => ({ message: actor.principal.tenantId }));
    // @ts-expect-error a role is asked of tenants only, so never of a public action's visitor
    serverAction({ schema: none, fromForm: () => ({}), access: "public", tenantRole: "tenant_admin" }, async () => ({ message: "" }));
  });
});
