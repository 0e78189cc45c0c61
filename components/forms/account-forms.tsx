"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

// The account forms: public (sign up, confirm an address, discard a sign-up, reset a password) and
// the signed-in user's own security (password, two-factor sign-in with its recovery codes).

export function SignUpForm({ action, minLength }: { action: FormAction<{ email: string }>; minLength: number }) {
  const { state, dispatch } = useActionForm(action, false);
  const f = formFields(state);
  if (state.ok)
    return (
      <div className="mt-6 space-y-3" role="status" data-testid="signup-sent">
        <p className="rounded-md bg-emerald-50 px-3 py-3 text-sm text-emerald-800">{state.message}</p>
        <p className="text-sm text-slate-600">
          Nothing there after a few minutes? Look in your spam folder, or{" "}
          <Link className="font-medium text-indigo-700 hover:underline" href="/signup">
            sign up again
          </Link>
          .
        </p>
      </div>
    );
  return (
    <form action={dispatch} aria-label="Create an account" className="mt-6 space-y-4">
      <Field label="Company or team" {...f("company")} hint="Your organisation's name on invoices and in the console">
        {(p) => <input {...p} required minLength={2} maxLength={100} autoComplete="organization" autoFocus />}
      </Field>
      <Field label="Work email" {...f("email")}>
        {(p) => <input {...p} type="email" required maxLength={254} autoComplete="email" />}
      </Field>
      <Field
        label="Password"
        {...f.bare("password")}
        hint={`At least ${minLength} characters; a phrase of a few words works well. Common passwords are refused.`}
      >
        {(p) => <input {...p} type="password" required minLength={minLength} maxLength={200} autoComplete="new-password" />}
      </Field>
      <FormMessage state={state} />
      <SubmitButton>Create account</SubmitButton>
    </form>
  );
}

/** The button a verification link's page shows: following a link is not enough (mail scanners fetch links), a person presses this. */
export function TokenActionForm({
  action,
  token,
  label,
  done,
  variant = "primary",
}: {
  action: FormAction;
  token: string;
  label: string;
  done: React.ReactNode;
  variant?: "primary" | "danger";
}) {
  const { state, dispatch } = useActionForm(action, false);
  if (state.ok)
    return (
      <div className="mt-6 space-y-4" role="status" data-testid="token-done">
        <p className="rounded-md bg-emerald-50 px-3 py-3 text-sm text-emerald-800">{state.message}</p>
        {done}
      </div>
    );
  return (
    <form action={dispatch} className="mt-6 space-y-4" aria-label={label}>
      <input type="hidden" name="token" value={token} />
      <FormMessage state={state} />
      <SubmitButton variant={variant}>{label}</SubmitButton>
    </form>
  );
}

/**
 * A verification link's page: the account's password beside the link's token (the link proves the
 * mailbox, the password who made the account), and a person presses the button (mail scanners fetch
 * links). Whoever does not know the password removes the unconfirmed account with the same link, or
 * chooses a password of their own through a reset.
 */
export function VerifyEmailForm({ action, discard, token }: { action: FormAction; discard: FormAction; token: string }) {
  const { state, dispatch } = useActionForm(action, false);
  const removed = useActionForm(discard, false);
  const f = formFields(state);
  const done = state.ok ? state : removed.state.ok ? removed.state : null;
  if (done)
    return (
      <div className="mt-6 space-y-4" role="status" data-testid="token-done">
        <p className="rounded-md bg-emerald-50 px-3 py-3 text-sm text-emerald-800">{done.message}</p>
        {state.ok ? (
          <Link
            className="inline-block rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white hover:bg-indigo-500"
            href="/login"
          >
            Sign in
          </Link>
        ) : (
          <Link className="font-medium text-indigo-700 hover:underline" href="/signup">
            Sign up with your address →
          </Link>
        )}
      </div>
    );
  return (
    <>
      <form action={dispatch} aria-label="Confirm your email address" className="mt-6 space-y-4">
        <input type="hidden" name="token" value={token} />
        <Field label="Password" {...f.bare("password")} hint="The password this account was created with">
          {(p) => <input {...p} type="password" required maxLength={200} autoComplete="current-password" autoFocus />}
        </Field>
        {f.error("token") ? (
          <p className="text-sm text-red-700" role="alert">
            {f.error("token")}{" "}
            <Link className="font-medium underline" href="/login">
              Sign in to get a new link
            </Link>
          </p>
        ) : null}
        <FormMessage state={state} />
        <SubmitButton>Confirm my email address</SubmitButton>
      </form>
      <section aria-labelledby="not-me" className="mt-8 border-t border-slate-200 pt-6">
        <h2 id="not-me" className="text-sm font-semibold text-slate-900">
          Did not sign up, or do not know this password?
        </h2>
        <p className="mt-1 text-sm text-slate-600">
          Someone may have signed up with your address. Remove that account, then sign up with a password of your own, or{" "}
          <Link className="font-medium text-indigo-700 hover:underline" href="/password-reset">
            choose a new password
          </Link>{" "}
          for it through a reset link sent to this address.
        </p>
        <form action={removed.dispatch} className="mt-4 space-y-4" aria-label="Remove this unconfirmed account">
          <input type="hidden" name="token" value={token} />
          <FormMessage state={removed.state} />
          <SubmitButton variant="danger">Remove this unconfirmed account</SubmitButton>
        </form>
      </section>
    </>
  );
}

export function ResetRequestForm({ action }: { action: FormAction }) {
  const { state, dispatch } = useActionForm(action, false);
  const f = formFields(state);
  return (
    <form action={dispatch} aria-label="Reset your password" className="mt-6 space-y-4">
      <Field label="Email" {...f("email")}>
        {(p) => <input {...p} type="email" required maxLength={254} autoComplete="email" autoFocus />}
      </Field>
      <FormMessage state={state} />
      <SubmitButton>Send reset link</SubmitButton>
    </form>
  );
}

export function ResetConfirmForm({ action, token, minLength }: { action: FormAction; token: string; minLength: number }) {
  const { state, dispatch } = useActionForm(action, false);
  const f = formFields(state);
  if (state.ok)
    return (
      <div className="mt-6 space-y-4" role="status">
        <p className="rounded-md bg-emerald-50 px-3 py-3 text-sm text-emerald-800">{state.message}</p>
        <Link className="font-medium text-indigo-700 hover:underline" href="/login">
          Sign in →
        </Link>
      </div>
    );
  return (
    <form action={dispatch} aria-label="Choose a new password" className="mt-6 space-y-4">
      <input type="hidden" name="token" value={token} />
      <Field label="New password" {...f.bare("password")} hint={`At least ${minLength} characters; common passwords are refused.`}>
        {(p) => <input {...p} type="password" required minLength={minLength} maxLength={200} autoComplete="new-password" autoFocus />}
      </Field>
      {f.error("token") ? (
        <p className="text-sm text-red-700" role="alert">
          {f.error("token")}{" "}
          <Link className="font-medium underline" href="/password-reset">
            Ask for a new link
          </Link>
        </p>
      ) : null}
      <FormMessage state={state} />
      <SubmitButton>Set new password</SubmitButton>
    </form>
  );
}

export function ChangePasswordForm({ action, minLength }: { action: FormAction; minLength: number }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const router = useRouter();
  const f = formFields(state);
  useEffect(() => {
    // every session ended, this one too: go and sign in again
    if (state.ok) {
      const t = setTimeout(() => router.replace("/login"), 2500);
      return () => clearTimeout(t);
    }
  }, [state, router]);
  return (
    <form ref={formRef} action={dispatch} aria-label="Change password" className="grid gap-3 p-5 sm:grid-cols-3 sm:items-start">
      <Field label="Current password" {...f.bare("current_password")}>
        {(p) => <input {...p} type="password" required autoComplete="current-password" />}
      </Field>
      <Field label="New password" {...f.bare("password")} hint={`At least ${minLength} characters, not a common one`}>
        {(p) => <input {...p} type="password" required minLength={minLength} maxLength={200} autoComplete="new-password" />}
      </Field>
      <div className="sm:pt-6">
        <SubmitButton variant="secondary">Change password</SubmitButton>
      </div>
      <div className="sm:col-span-3">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

/** Recovery codes, shown once: to copy, download or print. */
function RecoveryCodes({ codes }: { codes: string[] }) {
  const [copied, setCopied] = useState(false);
  const text = codes.join("\n");
  return (
    <div className="rounded-lg bg-amber-50 p-4 ring-1 ring-amber-200" data-testid="recovery-codes">
      <p className="text-sm font-semibold text-amber-900">Save these recovery codes now: they are shown only once.</p>
      <p className="mt-1 text-sm text-amber-900">
        Each signs you in once if you lose your device. Keep them somewhere safe, apart from the device.
      </p>
      <ol className="mt-3 grid grid-cols-2 gap-x-6 gap-y-1 font-mono text-sm text-slate-900 sm:grid-cols-5">
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ol>
      <div className="mt-3 flex gap-2">
        <button
          type="button"
          className="rounded-md bg-white px-3 py-1.5 text-xs font-medium text-slate-900 ring-1 ring-slate-300 hover:bg-slate-50"
          onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true))}
        >
          {copied ? "Copied" : "Copy"}
        </button>
        <a
          className="rounded-md bg-white px-3 py-1.5 text-xs font-medium text-slate-900 ring-1 ring-slate-300 hover:bg-slate-50"
          href={`data:text/plain;charset=utf-8,${encodeURIComponent(text + "\n")}`}
          download="recovery-codes.txt"
        >
          Download
        </a>
      </div>
    </div>
  );
}

export function TwoFactorSetup({
  begin,
  confirm,
  pending,
}: {
  begin: FormAction<{ secret: string; uri: string; qrSvg: string }>;
  confirm: FormAction<{ recoveryCodes: string[] }>;
  pending: { secret: string; uri: string; qrSvg: string } | null;
}) {
  const started = useActionForm(begin, false);
  const confirmed = useActionForm(confirm, false);
  const router = useRouter();
  const enrolment = started.state.data ?? pending;
  const f = formFields(confirmed.state);
  if (confirmed.state.ok && confirmed.state.data)
    return (
      <div className="space-y-4 p-5">
        <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
          {confirmed.state.message}
        </p>
        <RecoveryCodes codes={confirmed.state.data.recoveryCodes} />
        <button type="button" className="text-sm font-medium text-indigo-700 hover:underline" onClick={() => router.refresh()}>
          I saved them — done
        </button>
      </div>
    );
  if (!enrolment)
    return (
      <form action={started.dispatch} className="flex flex-wrap items-center gap-3 p-5" aria-label="Set up two-factor sign-in">
        <p className="text-sm text-slate-600">
          Use an authenticator app (1Password, Google Authenticator, Authy, Bitwarden…): signing in then asks for the code it shows.
        </p>
        <SubmitButton>Set up two-factor sign-in</SubmitButton>
        <FormMessage state={started.state} />
      </form>
    );
  return (
    <div className="grid gap-6 p-5 md:grid-cols-[auto_1fr]">
      <div
        className="h-[200px] w-[200px] rounded-lg bg-white ring-1 ring-slate-200"
        role="img"
        aria-label="QR code to scan with an authenticator app"
        dangerouslySetInnerHTML={{ __html: enrolment.qrSvg }}
      />
      <div className="space-y-4">
        <ol className="list-decimal space-y-1 pl-5 text-sm text-slate-700">
          <li>Scan the QR code with your authenticator app.</li>
          <li>
            Or type this key into it:{" "}
            <code data-testid="totp-secret" className="break-all rounded bg-slate-100 px-1.5 py-0.5 font-mono text-slate-900">
              {enrolment.secret}
            </code>
          </li>
          <li>Enter the 6-digit code the app shows now, and your password.</li>
        </ol>
        <form action={confirmed.dispatch} aria-label="Confirm two-factor sign-in" className="flex flex-wrap items-end gap-3">
          <Field label="Your password" {...f.bare("password")}>
            {(p) => <input {...p} required type="password" autoComplete="current-password" className={`${p.className} w-56`} />}
          </Field>
          <Field label="Code from the app" {...f.bare("code")}>
            {(p) => (
              <input
                {...p}
                required
                inputMode="numeric"
                autoComplete="one-time-code"
                pattern="[0-9 ]{6,7}"
                maxLength={7}
                className={`${p.className} w-32`}
              />
            )}
          </Field>
          <SubmitButton>Turn on</SubmitButton>
        </form>
        <FormMessage state={confirmed.state} />
      </div>
    </div>
  );
}

export function RegenerateCodesForm({ action }: { action: FormAction<{ recoveryCodes: string[] }> }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state, { idPrefix: "rc" });
  return (
    <div className="space-y-3 p-5">
      <form ref={formRef} action={dispatch} aria-label="New recovery codes" className="flex flex-wrap items-end gap-3">
        <Field label="A current code (or a recovery code)" {...f.bare("code")}>
          {(p) => <input {...p} required autoComplete="one-time-code" maxLength={40} className={`${p.className} w-56`} />}
        </Field>
        <SubmitButton variant="secondary">Make new recovery codes</SubmitButton>
      </form>
      {state.ok && state.data ? <RecoveryCodes codes={state.data.recoveryCodes} /> : <FormMessage state={state} />}
    </div>
  );
}

export function DisableTwoFactorForm({ action, required }: { action: FormAction; required: boolean }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state, { idPrefix: "off" });
  if (required)
    return (
      <p className="px-5 pb-5 text-sm text-slate-600">
        Your operators require two-factor sign-in for your role, so it cannot be turned off.
      </p>
    );
  return (
    <form
      ref={formRef}
      action={dispatch}
      aria-label="Turn off two-factor sign-in"
      className="grid gap-3 px-5 pb-5 sm:grid-cols-3 sm:items-start"
    >
      <Field label="Password" {...f.bare("password")}>
        {(p) => <input {...p} type="password" required autoComplete="current-password" />}
      </Field>
      <Field label="A current code (or a recovery code)" {...f.bare("code")}>
        {(p) => <input {...p} required autoComplete="one-time-code" maxLength={40} />}
      </Field>
      <div className="sm:pt-6">
        <SubmitButton variant="danger">Turn off</SubmitButton>
      </div>
      <div className="sm:col-span-3">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

/** An admin resets a user's two-factor sign-in (lost device). */
export function ResetTwoFactorForm({ action, userId, email }: { action: FormAction; userId: string; email: string }) {
  const { state, dispatch } = useActionForm(action);
  return (
    <form action={dispatch} aria-label={`Reset two-factor sign-in of ${email}`} className="inline-flex items-center gap-2">
      <input type="hidden" name="user_id" value={userId} />
      <SubmitButton variant="secondary" size="sm">
        Reset 2FA
      </SubmitButton>
      {state.message ? <span className={state.ok ? "text-xs text-emerald-700" : "text-xs text-red-700"}>{state.message}</span> : null}
    </form>
  );
}
