import { getToken } from "next-auth/jwt";
import { NextResponse, type NextRequest } from "next/server";
import { PATH_HEADER } from "@/lib/auth/admin-only";
import { authSecret, env } from "@/lib/env";
import { contentSecurityPolicy, newNonce, NONCE_HEADER, strictTransportSecurity } from "@/lib/http/security-headers";

// Every page: a Content-Security-Policy with a fresh nonce (lib/http/security-headers). Next.js
// reads the nonce from the request's own Content-Security-Policy header and puts it on the scripts
// it renders; the response carries the same policy, and HSTS when the app is served over https.
//
// The planes: sends anonymous visitors of either plane to sign-in (and back afterwards) and
// operators to their own plane. Who may see a page is decided by the layouts against the database:
// a tenant user in the operator plane gets a real 403 there, and a disabled user loses access at once.

export async function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  const e = env();
  const nonce = newNonce();
  const policy = contentSecurityPolicy({
    nonce,
    dev: e.NODE_ENV === "development",
    https: strictTransportSecurity(e.NEXTAUTH_URL) !== null,
    analytics: Boolean(process.env.NEXT_PUBLIC_GA_ID),
  });
  const secured = (response: NextResponse) => {
    response.headers.set("Content-Security-Policy", policy);
    const hsts = strictTransportSecurity(e.NEXTAUTH_URL);
    if (hsts) response.headers.set("Strict-Transport-Security", hsts);
    return response;
  };
  const headers = new Headers(request.headers);
  headers.set("Content-Security-Policy", policy);
  headers.set(NONCE_HEADER, nonce);
  // the planes' layouts decide who may see a page before anything streams (a real 403): they
  // need the path, which a layout is not given
  headers.set(PATH_HEADER, pathname);

  const plane = pathname === "/admin" || pathname.startsWith("/admin/") || pathname === "/dashboard" || pathname.startsWith("/dashboard/");
  if (plane) {
    const token = await getToken({ req: request, secret: authSecret() });
    if (!token) {
      const login = new URL("/login", request.url);
      login.searchParams.set("callbackUrl", pathname + search);
      return secured(NextResponse.redirect(login));
    }
    if (pathname.startsWith("/dashboard") && (token.role as string | undefined) === "operator") {
      return secured(NextResponse.redirect(new URL("/admin", request.url)));
    }
  }
  return secured(NextResponse.next({ request: { headers } }));
}

// Pages only: not the JSON API (/api, with its own fixed policy in next.config.ts), the inference
// gateway (/v1), the installer, Next's static files, or files with an extension (icons, manifest).
export const config = {
  matcher: [
    "/((?!api/|v1/|install/|install\\.sh$|_next/static/|_next/image|icons/|grafana/|favicon\\.ico$|manifest\\.webmanifest$|robots\\.txt$|sitemap\\.xml$).*)",
  ],
};
