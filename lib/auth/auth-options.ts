import "server-only";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { authSecret } from "@/lib/env";
import { verifyCredentials } from "@/lib/users/verify-credentials";

export const SESSION_MAX_AGE_S = 12 * 60 * 60;

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
      async authorize(credentials) {
        if (!credentials?.email || !credentials.password) return null;
        const result = await verifyCredentials(credentials.email, credentials.password);
        if (!result.ok) {
          // next-auth turns a thrown error into ?error=<message> for the sign-in page
          throw new Error(result.reason === "locked" ? "locked" : result.reason === "disabled" ? "disabled" : "invalid");
        }
        const u = result.user;
        return { id: u.id, email: u.email, name: u.name, role: u.role, tenantId: u.tenantId };
      },
    }),
  ],
  callbacks: {
    async jwt({ token, user }) {
      if (user) {
        token.role = (user as { role?: string }).role;
        token.tenantId = (user as { tenantId?: string | null }).tenantId ?? null;
      }
      return token;
    },
    async session({ session, token }) {
      if (session.user) {
        Object.assign(session.user, { id: token.sub, role: token.role, tenantId: token.tenantId });
      }
      return session;
    },
  },
};
