"use client";
import { useEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

// The forms of the node page's "BMC and provisioning" section (components/fleet/node-provisioning.tsx).

interface BmcValues {
  url: string;
  username: string;
  verify_tls: boolean;
  system_id: string | null;
}

/** Stores or replaces the node's BMC. The password is never shown again: it is typed each time. */
export function BmcForm({
  action,
  nodeId,
  current,
  canStore,
}: {
  action: FormAction;
  nodeId: string;
  current: BmcValues | null;
  canStore: boolean;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state, { under: "bmc", idPrefix: "bmc" });
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 sm:grid-cols-2" aria-label="BMC">
      <input type="hidden" name="id" value={nodeId} />
      <div className="sm:col-span-2">
        <Field
          label="Redfish address"
          hint="The BMC's address (https://10.40.1.17); everything else is discovered from its /redfish/v1 service root."
          {...f("url", current?.url)}
        >
          {(p) => (
            <input {...p} type="url" required maxLength={2048} placeholder="https://10.40.1.17" autoComplete="off" spellCheck={false} />
          )}
        </Field>
      </div>
      <Field label="Username" {...f("username", current?.username)}>
        {(p) => <input {...p} required maxLength={128} autoComplete="off" spellCheck={false} />}
      </Field>
      <Field
        label="Password"
        hint={current ? "Stored encrypted and never shown; type it to save any change." : "Stored encrypted and never shown again."}
        {...f.bare("password")}
      >
        {(p) => <input {...p} type="password" required maxLength={256} autoComplete="new-password" />}
      </Field>
      <Field
        label="Certificate"
        hint="An http:// BMC has none: choose “Do not verify” to send its password unencrypted, explicitly."
        {...f("verify_tls", current ? String(current.verify_tls) : "true")}
      >
        {(p) => (
          <select {...p}>
            <option value="true">Verify the BMC’s certificate</option>
            <option value="false">Do not verify (self-signed, or http)</option>
          </select>
        )}
      </Field>
      <Field label="System id (optional)" hint="Only for a BMC that manages several systems." {...f("system_id", current?.system_id)}>
        {(p) => <input {...p} maxLength={256} autoComplete="off" spellCheck={false} placeholder="e.g. System.Embedded.1" />}
      </Field>
      <div className="sm:col-span-2">
        <Field label="CA certificate (optional, PEM)" hint="Pins the CA an https BMC's certificate must chain to." {...f("ca_pem")}>
          {(p) => (
            <textarea
              {...p}
              rows={2}
              maxLength={65_536}
              spellCheck={false}
              placeholder="-----BEGIN CERTIFICATE-----"
              className={`${p.className} font-mono text-xs`}
            />
          )}
        </Field>
      </div>
      <div className="flex flex-wrap items-center gap-3 sm:col-span-2">
        {canStore ? (
          <SubmitButton>{current ? "Replace BMC" : "Store BMC"}</SubmitButton>
        ) : (
          <p className="text-sm text-amber-800">This installation has no SETTINGS_ENCRYPTION_KEY to seal BMC passwords with.</p>
        )}
        <FormMessage state={state} />
      </div>
    </form>
  );
}

const POWER = {
  on: { label: "Power on", variant: "secondary" as const, impact: "Sends On (or the BMC's equivalent) unless the system is on." },
  off: {
    label: "Power off",
    variant: "danger" as const,
    impact: "Cuts power at once (ForceOff): whatever runs on the node dies with it, and its agent goes silent.",
  },
  restart: {
    label: "Restart",
    variant: "danger" as const,
    impact: "Resets the system at once (ForceRestart): whatever runs on the node dies with it; a powered-off system is powered on.",
  },
};
type PowerAction = keyof typeof POWER;

/** Power on, off or restart through the BMC, each confirmed first (off and restart kill what runs there). */
export function PowerButtons({
  action,
  nodeId,
  hostname,
  blocked,
}: {
  action: FormAction;
  nodeId: string;
  hostname: string;
  blocked: string | null;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const [chosen, setChosen] = useState<PowerAction | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  useEffect(() => {
    if (chosen) dialog.current?.showModal();
  }, [chosen]);
  useEffect(() => {
    if (state.at) dialog.current?.close();
  }, [state]);
  return (
    <div>
      <div className="flex flex-wrap gap-3" role="group" aria-label="Power">
        {(Object.keys(POWER) as PowerAction[]).map((a) => (
          <Button
            key={a}
            type="button"
            variant={POWER[a].variant}
            aria-disabled={blocked !== null}
            aria-describedby={blocked ? "power-blocked" : undefined}
            onClick={(ev) => {
              if (blocked) return;
              opener.current = ev.currentTarget;
              setChosen(a);
            }}
            className={blocked ? "cursor-not-allowed opacity-60" : undefined}
          >
            {POWER[a].label}…
          </Button>
        ))}
      </div>
      {blocked ? (
        <p id="power-blocked" className="mt-2 text-xs text-slate-500">
          {blocked}
        </p>
      ) : null}
      <div className="mt-3">
        <FormMessage state={state} />
      </div>
      <dialog
        ref={dialog}
        aria-labelledby="power-title"
        onClose={() => {
          setChosen(null);
          opener.current?.focus();
        }}
        className="w-full max-w-lg rounded-xl p-0 shadow-xl backdrop:bg-slate-900/40"
      >
        {chosen ? (
          <form ref={formRef} action={dispatch} className="flex flex-col gap-4 p-6" aria-label={`${POWER[chosen].label} ${hostname}`}>
            <h2 id="power-title" className="text-lg font-semibold text-slate-900">
              {POWER[chosen].label} {hostname}?
            </h2>
            <input type="hidden" name="id" value={nodeId} />
            <input type="hidden" name="action" value={chosen} />
            <p className="text-sm text-slate-700">{POWER[chosen].impact}</p>
            <div className="flex justify-end gap-3">
              <Button type="button" variant="secondary" onClick={() => dialog.current?.close()}>
                Cancel
              </Button>
              <SubmitButton variant={POWER[chosen].variant === "danger" ? "danger" : "primary"}>{POWER[chosen].label}</SubmitButton>
            </div>
          </form>
        ) : null}
      </dialog>
    </div>
  );
}

/** Starts a provisioning from an image URL (the section says why not when it cannot start now). */
export function ProvisionForm({ action, nodeId, blocked }: { action: FormAction; nodeId: string; blocked: string | null }) {
  const { state, dispatch, formRef } = useActionForm(action, true);
  const f = formFields(state, { under: "provision", idPrefix: "provision" });
  return (
    <form ref={formRef} action={dispatch} className="flex flex-col gap-3" aria-label="Provision">
      <input type="hidden" name="id" value={nodeId} />
      <Field
        label="Image URL"
        hint={
          blocked ?? "An ISO the BMC can fetch over http(s). The node is powered off, the image inserted as a virtual CD and booted once."
        }
        {...f("image_url")}
      >
        {(p) => (
          <input
            {...p}
            type="url"
            required
            maxLength={2048}
            placeholder="https://images.example/gpu-node-2026.12.iso"
            spellCheck={false}
            aria-disabled={blocked !== null}
            readOnly={blocked !== null}
          />
        )}
      </Field>
      <div className="flex flex-wrap items-center gap-3">
        {blocked ? (
          <Button type="button" aria-disabled className="cursor-not-allowed opacity-60">
            Provision
          </Button>
        ) : (
          <SubmitButton>Provision</SubmitButton>
        )}
        <FormMessage state={state} />
      </div>
    </form>
  );
}

/** Forgets the BMC (and its password), after a confirmation. */
export function RemoveBmcButton({ action, nodeId }: { action: FormAction; nodeId: string }) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <>
      <Button type="button" variant="ghost" size="sm" onClick={() => dialog.current?.showModal()}>
        Remove BMC…
      </Button>
      <FormMessage state={state} />
      <dialog ref={dialog} aria-labelledby="remove-bmc-title" className="w-full max-w-md rounded-xl p-0 shadow-xl backdrop:bg-slate-900/40">
        <form
          ref={formRef}
          action={dispatch}
          className="flex flex-col gap-4 p-6"
          aria-label="Remove BMC"
          onSubmit={() => dialog.current?.close()}
        >
          <h2 id="remove-bmc-title" className="text-lg font-semibold text-slate-900">
            Remove this node&apos;s BMC?
          </h2>
          <input type="hidden" name="id" value={nodeId} />
          <p className="text-sm text-slate-700">
            Its address, login and encrypted password are forgotten. Power and provisioning stop working until one is stored again.
          </p>
          <div className="flex justify-end gap-3">
            <Button type="button" variant="secondary" onClick={() => dialog.current?.close()}>
              Keep it
            </Button>
            <SubmitButton variant="danger">Remove</SubmitButton>
          </div>
        </form>
      </dialog>
    </>
  );
}
