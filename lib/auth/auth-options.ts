import "server-only";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { authSecret, env, proxyTrust } from "@/lib/env";
import { clientAddress } from "@/lib/http/client-address";
import { endSessions } from "@/lib/users/end-sessions";
import { verifyCredentials } from "@/lib/users/verify-credentials";
import { safeCallbackPath } from "./callback-url";

const SESSION_MAX_AGE_S = 12 * 60 * 60;

export const authOptions: NextAuthOptions = {
  // A getter: the secret is checked when a request needs it, not when `next build` loads this module.
  get secret() {
    return authSecret();
  },
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_S },
  pages: { signIn: "/login", error: "/login" },
  providers: [
    CredentialsProvider({
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(credentials, req) {
        if (!credentials?.email || !credentials.password) return null;
        const forwarded = req?.headers?.["x-forwarded-for"] as string | string[] | undefined;
        const address = clientAddress(Array.isArray(forwarded) ? forwarded.join(", ") : forwarded, proxyTrust());
        const result = await verifyCredentials(credentials.email, credentials.password, address);
        if (!result.ok) {
          // next-auth turns a thrown error into ?error=<message> for the sign-in page
          throw new Error(result.reason === "throttled" ? `throttled:${result.retryAfterS}` : result.reason);
        }
        const u = result.user;
        return { id: u.id, email: u.email, name: u.name, role: u.role, tenantId: u.tenantId, sessionVersion: u.sessionVersion };
      },
    }),
  ],
  callbacks: {
    async jwt({ token, user }) {
      if (user) {
        token.role = (user as { role?: string }).role;
        token.tenantId = (user as { tenantId?: string | null }).tenantId ?? null;
        // checked against the user's row on every request: a password change or sign-out ends the session
        token.sv = (user as { sessionVersion?: number }).sessionVersion ?? 0;
      }
      return token;
    },
    async session({ session, token }) {
      if (session.user) {
        Object.assign(session.user, { id: token.sub, role: token.role, tenantId: token.tenantId, sv: token.sv ?? 0 });
      }
      return session;
    },
    // only paths of this site, after URL normalisation (`/%5Cevil.example` and friends go home)
    async redirect({ url, baseUrl }) {
      const origin = new URL(env().NEXTAUTH_URL ?? baseUrl).origin;
      const path = safeCallbackPath(url.startsWith(origin) ? url.slice(origin.length) || "/" : url, origin);
      return `${origin}${path ?? "/"}`;
    },
  },
  events: {
    // signing out ends every session of the user, not only this browser's cookie
    async signOut({ token }) {
      if (token?.sub) await endSessions(token.sub, typeof token.sv === "number" ? token.sv : 0);
    },
  },
};
