import { readdirSync } from "node:fs";
import path from "node:path";
import { Suspense } from "react";
import { describe, expect, it, vi } from "vitest";
import { describeMissing } from "@/components/shell/not-found-message";

// The console's page wrapper with Next's navigation and the session stood in for: each refusal is
// thrown as Next throws it, so the test sees which one a page gave.
vi.mock("next/navigation", () => ({
  notFound: () => {
    throw new Error("404");
  },
  forbidden: () => {
    throw new Error("403");
  },
  redirect: (to: string) => {
    throw new Error(`redirect ${to}`);
  },
}));
const session = vi.hoisted(() => ({ principal: null as unknown }));
vi.mock("@/lib/auth/session", async () => {
  const { forbidden, redirect } = await import("next/navigation");
  const signIn = (path: string) => redirect(`/login?callbackUrl=${encodeURIComponent(path)}`);
  return {
    requireOperatorPage: async (path: string) => {
      const p = session.principal as { kind: string } | null;
      if (!p) signIn(path);
      if (p!.kind !== "operator") forbidden();
      return p;
    },
    requireTenantPage: async (path: string) => {
      const p = session.principal as { kind: string } | null;
      if (!p) signIn(path);
      if (p!.kind === "operator") redirect("/admin");
      return p;
    },
    requireTenantAdminPage: async () => {
      throw new Error("unused");
    },
  };
});

const { page } = await import("@/lib/pages/page");
const { allowedOperatorTargets } = await import("@/lib/fleet/node-page");

const ID = "00000000-0000-4000-8000-000000000001";
const operator = { kind: "operator", label: "ops" };
const tenant = { kind: "tenant", tenantId: ID, role: "tenant_member", label: "member" };
const open = (render: ReturnType<typeof page>, params: Record<string, string>, searchParams: Record<string, string> = {}) =>
  render({ params: Promise.resolve(params), searchParams: Promise.resolve(searchParams) });

describe("console pages", () => {
  const load = vi.fn(async ({ ids }: { ids: { id: string } }) => (ids.id === ID ? { name: "gpu-1" } : null));
  const nodePage = page(
    { plane: "operator", path: "/admin/nodes/[id]", ids: ["id"], load },
    ({ data, searchParams }) => `${data.name} ${searchParams.range ?? ""}`,
  );

  it("send a visitor without a session to sign in, and back to the page after", async () => {
    session.principal = null;
    await expect(open(nodePage, { id: ID })).rejects.toThrow(`redirect /login?callbackUrl=${encodeURIComponent(`/admin/nodes/${ID}`)}`);
  });

  it("refuse the other plane before reading the id or loading anything", async () => {
    session.principal = tenant;
    await expect(open(nodePage, { id: "not-an-id" })).rejects.toThrow("403");
    const tenantPage = page({ plane: "tenant", path: "/dashboard" }, () => "dashboard");
    session.principal = operator;
    await expect(open(tenantPage, {})).rejects.toThrow("redirect /admin");
    expect(load).not.toHaveBeenCalled();
  });

  it("answer 404 for a malformed id without a query, and for a view model that is null", async () => {
    session.principal = operator;
    await expect(open(nodePage, { id: "-".repeat(36) })).rejects.toThrow("404");
    expect(load).not.toHaveBeenCalled();
    await expect(open(nodePage, { id: "00000000-0000-4000-8000-000000000002" })).rejects.toThrow("404");
    expect(await open(nodePage, { id: ID }, { range: "24h" })).toBe("gpu-1 24h");
  });

  it("decide a 404 before any skeleton can stream: `loading` wraps only the rendering, after the id and the view model", async () => {
    session.principal = operator;
    const skeleton = "skeleton";
    const render = vi.fn(() => "list");
    const withSkeleton = page({ plane: "operator", path: "/admin/nodes/[id]", ids: ["id"], load, loading: skeleton }, render);
    await expect(open(withSkeleton, { id: "00000000-0000-4000-8000-000000000002" })).rejects.toThrow("404");
    const element = (await open(withSkeleton, { id: ID })) as {
      type: unknown;
      props: { fallback: unknown; children: { type: () => unknown } };
    };
    expect(element.type).toBe(Suspense);
    expect(element.props.fallback).toBe(skeleton);
    expect(render).not.toHaveBeenCalled();
    expect(await element.props.children.type()).toBe("list");
  });
});

describe("console routes", () => {
  it("have no loading.tsx: a Suspense around a page sends its 200 before the page can say 404 or 403", () => {
    const found = readdirSync("app", { recursive: true, encoding: "utf8" }).filter(
      (f) => /^\((admin|tenant)\)\//.test(f) && path.basename(f) === "loading.tsx",
    );
    expect(found).toEqual([]);
  });

  it("say what is missing, and where to go instead", () => {
    expect(describeMissing(`/admin/jobs/${ID}`)).toMatchObject({ title: "No such job", href: "/admin/jobs", label: "Back to the queue" });
    expect(describeMissing(`/dashboard/billing/invoices/${ID}`)).toMatchObject({ title: "No such invoice", href: "/dashboard/billing" });
    expect(describeMissing(`/dashboard/jobs/${ID}`).body).toContain("another organisation");
    expect(describeMissing(`/admin/jobs/${ID}`).body).not.toContain("another organisation");
    expect(describeMissing("/admin/nothing-here")).toMatchObject({ title: "This page does not exist", href: "/admin" });
    expect(describeMissing("/no/such/page")).toMatchObject({ href: "/" });
  });
});

describe("the node page's lifecycle actions", () => {
  it("are the operator targets that change something from the node's state", () => {
    expect(allowedOperatorTargets({ status: "available", statusBeforeOffline: null })).toEqual(["draining", "maintenance", "quarantined"]);
    expect(allowedOperatorTargets({ status: "quarantined", statusBeforeOffline: null })).toContain("available");
    // offline: the choice is where it returns to, so a target other than its current one applies
    expect(allowedOperatorTargets({ status: "offline", statusBeforeOffline: "maintenance" })).not.toContain("maintenance");
  });
});
