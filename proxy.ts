import { getToken } from "next-auth/jwt";
import { NextResponse, type NextRequest } from "next/server";
import { PATH_HEADER } from "@/lib/auth/admin-only";
import { authSecret } from "@/lib/env";

// Sends anonymous visitors of either plane to sign-in (and back afterwards) and operators to their
// own plane. Who may see a page is decided by the layouts against the database: a tenant user in
// the operator plane gets a real 403 there, and a disabled user loses access at once.

export async function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  const token = await getToken({
    req: request,
    secret: authSecret(),
  });
  if (!token) {
    const login = new URL("/login", request.url);
    login.searchParams.set("callbackUrl", pathname + search);
    return NextResponse.redirect(login);
  }
  const role = token.role as string | undefined;
  if (pathname.startsWith("/dashboard") && role === "operator") {
    return NextResponse.redirect(new URL("/admin", request.url));
  }
  // the planes' layouts decide who may see a page before anything streams (a real 403): they
  // need the path, which a layout is not given
  const headers = new Headers(request.headers);
  headers.set(PATH_HEADER, pathname);
  return NextResponse.next({ request: { headers } });
}

export const config = { matcher: ["/admin", "/admin/:path*", "/dashboard", "/dashboard/:path*"] };
