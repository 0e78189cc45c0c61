import { getToken } from "next-auth/jwt";
import { NextResponse, type NextRequest } from "next/server";
import { authSecret } from "@/lib/env";

// Routes each plane to the right people before any page renders. Pages check again against the
// database (a disabled user keeps a valid token until it expires; the layouts catch that).

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
  if (pathname.startsWith("/admin") && role !== "operator") {
    return NextResponse.rewrite(new URL("/forbidden", request.url), { status: 403 });
  }
  if (pathname.startsWith("/dashboard") && role === "operator") {
    return NextResponse.redirect(new URL("/admin", request.url));
  }
  return NextResponse.next();
}

export const config = { matcher: ["/admin", "/admin/:path*", "/dashboard", "/dashboard/:path*"] };
