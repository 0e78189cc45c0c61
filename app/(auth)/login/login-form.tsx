"use client";
import Link from "next/link";
import { getSession, signIn } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { Field } from "@/components/forms/form-parts";
import { Button } from "@/components/ui/button";

const messages: Record<string, string> = {
  disabled: "This account or its organisation is disabled. Contact your administrator.",
  unverified: "Confirm your email address first: we just sent a new link to it.",
  challenge_expired: "That took too long; sign in again.",
};

/** next-auth hands back the reason authorize() threw; `throttled:<seconds>` says how long to wait. */
function errorMessage(code: string | undefined, step: "password" | "code"): string {
  const throttled = /^throttled:(\d+)$/.exec(code ?? "");
  if (throttled) return `Too many sign-in attempts. Wait ${throttled[1]} seconds and try again.`;
  return (
    messages[code ?? ""] ??
    (step === "code" ? "That code did not work. Type the current one from your app, or a recovery code." : "Wrong email or password.")
  );
}

/**
 * Signing in, in one or two steps: email and password, then (for accounts with two-factor sign-in)
 * a code from the authenticator app or a recovery code. The second step carries the signed
 * challenge the first answered, never the password.
 */
export function LoginForm({ callbackUrl, initialError }: { callbackUrl: string; initialError?: string }) {
  const router = useRouter();
  const [error, setError] = useState(initialError);
  const [pending, setPending] = useState(false);
  const [challenge, setChallenge] = useState<string | null>(null);
  const [recovery, setRecovery] = useState(false);
  const codeRef = useRef<HTMLInputElement>(null);

  async function finish() {
    const session = await getSession();
    const role = (session?.user as { role?: string } | undefined)?.role;
    const home = role === "operator" ? "/admin" : "/dashboard";
    // callbackUrl is a same-origin path already (the page checked it); a tenant user goes home unless it is theirs
    const target = callbackUrl && (callbackUrl.startsWith(home) || role === "operator") ? callbackUrl : home;
    router.replace(target);
    router.refresh();
  }

  async function onPassword(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setPending(true);
    setError(undefined);
    const form = new FormData(e.currentTarget);
    const result = await signIn("credentials", {
      email: (form.get("email") as string | null) ?? "",
      password: (form.get("password") as string | null) ?? "",
      redirect: false,
    });
    const second = /^second_factor:(.+)$/.exec(result?.error ?? "");
    if (second) {
      setPending(false);
      setChallenge(second[1]!);
      setTimeout(() => codeRef.current?.focus(), 0);
      return;
    }
    if (!result || result.error) {
      setPending(false);
      setError(errorMessage(result?.error ?? undefined, "password"));
      return;
    }
    await finish();
  }

  async function onCode(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setPending(true);
    setError(undefined);
    const form = new FormData(e.currentTarget);
    const result = await signIn("credentials", {
      challenge: challenge ?? "",
      code: (form.get("code") as string | null) ?? "",
      redirect: false,
    });
    if (!result || result.error) {
      setPending(false);
      if (result?.error === "challenge_expired") setChallenge(null);
      setError(errorMessage(result?.error ?? undefined, "code"));
      return;
    }
    await finish();
  }

  const alert = error ? (
    <p data-testid="login-error" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-700" role="alert">
      {error}
    </p>
  ) : null;

  if (challenge)
    return (
      // keyed: React must not reuse the password field's element (and its value) for the code
      <form key="code" onSubmit={onCode} className="mt-6 space-y-4" aria-label="Two-factor sign-in">
        <p className="text-sm text-slate-600">
          {recovery ? "Type one of your recovery codes (each works once)." : "Type the 6-digit code your authenticator app shows."}
        </p>
        <Field label={recovery ? "Recovery code" : "Code"} name="code">
          {(p) =>
            recovery ? (
              <input {...p} ref={codeRef} required autoComplete="one-time-code" maxLength={40} placeholder="abcde-fghjk" />
            ) : (
              <input
                {...p}
                ref={codeRef}
                required
                inputMode="numeric"
                autoComplete="one-time-code"
                pattern="[0-9 ]{6,7}"
                maxLength={7}
                placeholder="123456"
              />
            )
          }
        </Field>
        {alert}
        <Button type="submit" className="w-full" disabled={pending} aria-busy={pending}>
          {pending ? "Checking…" : "Verify"}
        </Button>
        <div className="flex justify-between text-sm">
          <button type="button" className="font-medium text-indigo-700 hover:underline" onClick={() => setRecovery((r) => !r)}>
            {recovery ? "Use the app's code" : "Use a recovery code"}
          </button>
          <button type="button" className="text-slate-600 hover:underline" onClick={() => (setChallenge(null), setError(undefined))}>
            Start over
          </button>
        </div>
      </form>
    );

  return (
    <form key="password" onSubmit={onPassword} className="mt-6 space-y-4" aria-label="Sign in">
      <Field label="Email" name="email">
        {(p) => <input {...p} type="email" autoComplete="username" required autoFocus />}
      </Field>
      <Field label="Password" name="password">
        {(p) => <input {...p} type="password" autoComplete="current-password" required />}
      </Field>
      {alert}
      <Button type="submit" className="w-full" disabled={pending} aria-busy={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </Button>
      <p className="text-right text-sm">
        <Link className="font-medium text-indigo-700 hover:underline" href="/password-reset">
          Forgot your password?
        </Link>
      </p>
    </form>
  );
}
