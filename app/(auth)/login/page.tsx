import Link from "next/link";
import { Logo } from "@/components/shell/app-shell";
import { safeCallbackPath } from "@/lib/auth/callback-url";
import { env } from "@/lib/env";
import { DEMO_ACCOUNTS } from "@/lib/platform/demo-accounts";
import { LoginForm } from "./login-form";

export const metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

const errors: Record<string, string> = {
  invalid: "Wrong email or password.",
  throttled: "Too many sign-in attempts. Wait a minute and try again.",
  disabled: "This account or its organisation is disabled. Contact your administrator.",
  unverified: "Confirm your email address first: we sent a link to it.",
};

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; error?: string }> }) {
  const sp = await searchParams;
  // only a path of this site, after the normalisation a browser applies (no `/%5Cevil.example`)
  const callbackUrl = safeCallbackPath(sp.callbackUrl, "http://gpuforge.invalid") ?? "";
  return (
    <div className="flex min-h-screen flex-col items-center justify-center bg-slate-900 px-4 py-12">
      <Link href="/" className="mb-8" aria-label="GPUForge home">
        <Logo />
      </Link>
      <main className="w-full max-w-sm rounded-xl bg-white p-8 shadow-xl">
        <h1 className="text-xl font-semibold text-slate-900">Sign in</h1>
        <p className="mt-1 text-sm text-slate-500">Operators land in the console, tenants in their dashboard.</p>
        <LoginForm callbackUrl={callbackUrl} initialError={sp.error ? (errors[sp.error.split(":")[0]!] ?? errors.invalid) : undefined} />
      </main>
      <p className="mt-6 text-sm text-slate-300">
        New here?{" "}
        <Link className="font-medium text-white underline" href="/signup">
          Create an account
        </Link>
      </p>
      {env().DEMO_MODE ? (
        <section
          aria-labelledby="demo-accounts"
          className="mt-6 w-full max-w-sm rounded-xl bg-white/5 p-5 text-sm text-slate-300 ring-1 ring-white/10"
        >
          <h2 id="demo-accounts" className="font-semibold text-white">
            Demo accounts
          </h2>
          <ul className="mt-2 space-y-1.5">
            {DEMO_ACCOUNTS.map((a) => (
              <li key={a.email}>
                <span className="text-slate-400">{a.label}:</span> <code className="text-slate-100">{a.email}</code> /{" "}
                <code className="text-slate-100">{a.password}</code>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}
