"use client";
import { getSession, signIn } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Field, inputClass } from "@/components/forms/form-parts";
import { Button } from "@/components/ui/button";

const messages: Record<string, string> = {
  locked: "Too many failed attempts for this email. Try again in 15 minutes.",
  disabled: "This account or its organisation is disabled. Contact your administrator.",
};

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
      email: String(form.get("email") ?? ""),
      password: String(form.get("password") ?? ""),
      redirect: false,
    });
    if (!result || result.error) {
      setPending(false);
      setError(messages[result?.error ?? ""] ?? "Wrong email or password.");
      return;
    }
    const session = await getSession();
    const role = (session?.user as { role?: string } | undefined)?.role;
    const home = role === "operator" ? "/admin" : "/dashboard";
    const target = callbackUrl && callbackUrl.startsWith(home) ? callbackUrl : callbackUrl && role === "operator" ? callbackUrl : home;
    router.replace(target);
    router.refresh();
  }

  return (
    <form onSubmit={onSubmit} className="mt-6 space-y-4" aria-label="Sign in">
      <Field label="Email" name="email">{(p) => <input {...p} type="email" autoComplete="username" required autoFocus />}</Field>
      <Field label="Password" name="password">{(p) => <input {...p} type="password" autoComplete="current-password" required />}</Field>
      {error ? <p data-testid="login-error" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-700" role="alert">{error}</p> : null}
      <Button type="submit" className="w-full" disabled={pending} aria-busy={pending}>{pending ? "Signing in…" : "Sign in"}</Button>
    </form>
  );
}
