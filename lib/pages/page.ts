import "server-only";
import { notFound } from "next/navigation";
import { createElement, Suspense, type ReactNode } from "react";
import type { OperatorPrincipal, TenantPrincipal } from "@/lib/auth/principal";
import { requireOperatorPage, requireTenantAdminPage, requireTenantPage } from "@/lib/auth/session";
import { isUuid } from "@/lib/ids";

// The one wrapper for console pages, as route() is for the API: the plane (whose session may see
// the page), the route's ids, then one view model from lib, then render. A page states these
// instead of repeating the checks, so none forgets one.
//
// Status codes: a page's answer (404 for an unknown id, 403 for the wrong role) is only an HTTP
// status while nothing has been sent yet. Next streams everything inside a Suspense boundary, and a
// loading.tsx is one around every page below it, so a "not found" thrown there arrived with the
// 200 already sent (issue 32). No console route has a loading.tsx; a list page may ask for a
// skeleton with `loading`, which wraps only its rendering, after the checks and the view model, so
// whatever they decide is still a status.

/** Who may open a page: an operator, anyone of a tenant, or a tenant's admins. */
export type Plane = "operator" | "tenant" | "tenant_admin";

type PlanePrincipal<P extends Plane> = P extends "operator" ? OperatorPrincipal : TenantPrincipal;

/** The query string as the pages read it (a repeated parameter reaches them as Next gives it). */
type SearchParams = Record<string, string | undefined>;

interface NextPageProps {
  params: Promise<Record<string, string | string[] | undefined>>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

export interface PageContext<P extends Plane, I extends string> {
  principal: PlanePrincipal<P>;
  /** the route's ids, each a well-formed UUID */
  ids: Record<I, string>;
  searchParams: SearchParams;
}

export interface PageSpec<P extends Plane, I extends string, D> {
  plane: P;
  /** the route, e.g. "/admin/jobs/[id]": a visitor without a session signs in and comes back here */
  path: string;
  /** route parameters that are ids: a malformed one is "not found" before any query runs */
  ids?: readonly I[];
  /** the page's view model from lib; null (missing, or not the caller's) is "not found" */
  load?: (ctx: PageContext<P, I>) => Promise<D | null>;
  /** shown while `render` works (a list page's skeleton); the status is decided before it shows */
  loading?: ReactNode;
}

/**
 * A console page. Without a session it redirects to sign-in; a session of the other plane gets the
 * plane's answer (a tenant on an operator page 403, an operator on a tenant page their console);
 * a malformed id or a view model that is null answers 404.
 */
export function page<const P extends Plane, const I extends string = never, D = undefined>(
  spec: PageSpec<P, I, D>,
  render: (ctx: PageContext<P, I> & { data: D }) => ReactNode | Promise<ReactNode>,
) {
  return async function Page(props: NextPageProps): Promise<ReactNode> {
    const params = await props.params;
    const principal = (await requirePlane(spec.plane, pathOf(spec.path, params))) as PlanePrincipal<P>;
    const ids = {} as Record<I, string>;
    for (const name of spec.ids ?? []) {
      const value = params[name];
      if (!isUuid(value)) notFound();
      ids[name] = value;
    }
    // typed as the pages always read it; Next hands a repeated parameter over as an array
    const ctx: PageContext<P, I> = { principal, ids, searchParams: (await props.searchParams) as SearchParams };
    let data = undefined as D;
    if (spec.load) {
      const loaded = await spec.load(ctx);
      if (loaded === null) notFound();
      data = loaded;
    }
    if (spec.loading === undefined) return render({ ...ctx, data });
    const Rendered = async () => render({ ...ctx, data });
    return createElement(Suspense, { fallback: spec.loading }, createElement(Rendered));
  };
}

function requirePlane(plane: Plane, path: string) {
  if (plane === "operator") return requireOperatorPage(path);
  return plane === "tenant_admin" ? requireTenantAdminPage(path) : requireTenantPage(path);
}

/** "/admin/jobs/[id]" with the request's params: the address to come back to after signing in. */
function pathOf(route: string, params: Record<string, string | string[] | undefined>): string {
  return route.replace(/\[(\w+)\]/g, (_, name: string) => String(params[name] ?? ""));
}
