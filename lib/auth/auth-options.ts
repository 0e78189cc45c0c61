import "server-only";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { authSecret, env, proxyTrust } from "@/lib/env";
import { clientAddress } from "@/lib/http/client-address";
import { endSessions } from "@/lib/users/end-sessions";
import { signInWithPassword, signInWithSecondFactor, type SignInStep } from "@/lib/accounts/sign-in";
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
      // Step one sends email and password; an account with two-factor sign-in answers with a
      // challenge (in the error, as next-auth passes errors back), and step two sends the challenge
      // and a code. next-auth turns a thrown error into ?error=<message> for the sign-in page.
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
        challenge: { label: "Challenge", type: "hidden" },
        code: { label: "Code", type: "text" },
      },
      async authorize(credentials, req) {
        const forwarded = req?.headers?.["x-forwarded-for"] as string | string[] | undefined;
        const address = clientAddress(Array.isArray(forwarded) ? forwarded.join(", ") : forwarded, proxyTrust());
        const ua = req?.headers?.["user-agent"];
        const visitor = { address, userAgent: typeof ua === "string" ? ua : null };
        let step: SignInStep;
        if (credentials?.challenge) {
          if (!credentials.code) return null;
          step = await signInWithSecondFactor(credentials.challenge, credentials.code, visitor);
        } else {
          if (!credentials?.email || !credentials.password) return null;
          step = await signInWithPassword(credentials.email, credentials.password, visitor);
        }
        if (!step.ok) {
          throw new Error(
            step.reason === "throttled"
              ? `throttled:${step.retryAfterS}`
              : step.reason === "second_factor"
                ? `second_factor:${step.challenge}`
                : step.reason,
          );
        }
        const u = step.user;
        return {
          id: u.id,
          email: u.email,
          name: u.name,
          role: u.role,
          tenantId: u.tenantId,
          sessionVersion: u.sessionVersion,
          twoFactor: step.twoFactor,
        };
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
        token.tf = Boolean((user as { twoFactor?: boolean }).twoFactor);
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
