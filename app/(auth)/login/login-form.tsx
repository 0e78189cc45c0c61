"use client";
import { getSession, signIn } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Field, inputClass } from "@/components/forms/form-parts";
import { Button } from "@/components/ui/button";

const messages: Record<string, string> = {
  disabled: "This account or its organisation is disabled. Contact your administrator.",
};

/** next-auth hands back the reason authorize() threw; `throttled:<seconds>` says how long to wait. */
function errorMessage(code: string | undefined): string {
  const throttled = /^throttled:(\d+)$/.exec(code ?? "");
  if (throttled) return `Too many sign-in attempts. Wait ${throttled[1]} seconds and try again.`;
  return messages[code ?? ""] ?? "Wrong email or password.";
}

export function LoginForm({ callbackUrl, initialError }: { callbackUrl: string; initialError?: string }) {
  const router = useRouter();
  const [error, setError] = useState(initialError);
  const [pending, setPending] = useState(false);
  void inputClass;

  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setPending(true);
    setError(undefined);
    const form = new FormData(e.currentTarget);
    const result = await signIn("credentials", {
      email: (form.get("email") as string | null) ?? "",
      password: (form.get("password") as string | null) ?? "",
      redirect: false,
    });
    if (!result || result.error) {
      setPending(false);
      setError(errorMessage(result?.error ?? undefined));
      return;
    }
    const session = await getSession();
    const role = (session?.user as { role?: string } | undefined)?.role;
    const home = role === "operator" ? "/admin" : "/dashboard";
    // callbackUrl is a same-origin path already (the page checked it); a tenant user goes home unless it is theirs
    const target = callbackUrl && (callbackUrl.startsWith(home) || role === "operator") ? callbackUrl : home;
    router.replace(target);
    router.refresh();
  }

  return (
    <form onSubmit={onSubmit} className="mt-6 space-y-4" aria-label="Sign in">
      <Field label="Email" name="email">
        {(p) => <input {...p} type="email" autoComplete="username" required autoFocus />}
      </Field>
      <Field label="Password" name="password">
        {(p) => <input {...p} type="password" autoComplete="current-password" required />}
      </Field>
      {error ? (
        <p data-testid="login-error" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-700" role="alert">
          {error}
        </p>
      ) : null}
      <Button type="submit" className="w-full" disabled={pending} aria-busy={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </Button>
    </form>
  );
}
