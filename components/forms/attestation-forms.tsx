"use client";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

// The console's forms for attestation: a policy written by hand, a policy captured from a trusted
// node's evidence, a policy's next version, and a cluster's handover settings.

const SECTIONS_HINT =
  'JSON: {"pcr_bank": "sha256", "pcrs": {"0": "<64 hex>", …}, "require": ["event_log", …], "events": [{"pcr": 4, "digest": "<64 hex>", "type": "EV_EFI_BOOT_SERVICES_APPLICATION"}], "gpu": {"driver_versions": ["560.35.03"]}}. Every section is required; none is read as off.';

const EXAMPLE = JSON.stringify(
  {
    pcr_bank: "sha256",
    pcrs: { "0": "00".repeat(32), "4": "00".repeat(32), "7": "00".repeat(32) },
    require: ["wipe_report"],
  },
  null,
  2,
);

export function CreatePolicyForm({ action }: { action: FormAction }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state, { idPrefix: "policy" });
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5" aria-label="Write a policy">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field label="Name" {...f("name")} hint="Verdicts name it, with its version">
          {(p) => <input {...p} required placeholder="h100-ubuntu-2404" />}
        </Field>
        <Field label="Description" {...f("description")}>
          {(p) => <input {...p} placeholder="Secure Boot, shim 15.8, GRUB 2.12, kernel 6.8" />}
        </Field>
      </div>
      <Field label="Sections" {...f("sections")} hint={SECTIONS_HINT}>
        {(p) => (
          <textarea
            {...p}
            required
            rows={10}
            className={`${p.className} font-mono text-xs`}
            defaultValue={p.defaultValue ?? EXAMPLE}
            spellCheck={false}
          />
        )}
      </Field>
      <div className="flex items-center gap-4">
        <SubmitButton>Create policy</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function CapturePolicyForm({
  action,
  nodes,
}: {
  action: FormAction;
  nodes: Array<{ node_id: string; hostname: string; cluster_name: string; result: string; created_at: string }>;
}) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state, { idPrefix: "capture" });
  if (nodes.length === 0)
    return (
      <p className="p-5 text-sm text-slate-500">
        No node has sent evidence yet. A node attests during its first handover, even without a policy.
      </p>
    );
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5" aria-label="Capture a policy from a node">
      <div className="grid gap-4 sm:grid-cols-2">
        <Field
          label="Reference node (one you trust)"
          {...f("node_id")}
          hint="Its latest evidence: every PCR its boot log replays to, every event it measured"
        >
          {(p) => (
            <select {...p} required>
              {nodes.map((n) => (
                <option key={n.node_id} value={n.node_id}>
                  {n.hostname} · {n.cluster_name} · {n.result} {n.created_at.slice(0, 16).replace("T", " ")}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Policy name" {...f("name")}>
          {(p) => <input {...p} required placeholder="h100-baseline" />}
        </Field>
      </div>
      <fieldset>
        <legend className="mb-1 text-sm font-medium text-slate-800">Evidence required besides the quote</legend>
        <div className="flex flex-wrap gap-4 text-sm text-slate-700">
          {[
            ["event_log", "Boot event log"],
            ["wipe_report", "Wipe report"],
            ["gpu_reports", "GPU reports (driver, VBIOS)"],
          ].map(([value, label]) => (
            <label key={value} className="flex items-center gap-2">
              <input
                type="checkbox"
                name="require"
                value={value}
                defaultChecked={value !== "gpu_reports"}
                className="h-4 w-4 rounded border-slate-300"
              />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="flex items-center gap-4">
        <SubmitButton>Capture policy</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function NewPolicyVersionForm({
  action,
  id,
  current,
  description,
}: {
  action: FormAction;
  id: string;
  current: string;
  description: string | null;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state, { idPrefix: "version" });
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5" aria-label="New version">
      <input type="hidden" name="id" value={id} />
      <Field label="Description" {...f("description")}>
        {(p) => <input {...p} defaultValue={p.defaultValue ?? description ?? ""} />}
      </Field>
      <Field label="Sections of the new version" {...f("sections")} hint={SECTIONS_HINT}>
        {(p) => (
          <textarea
            {...p}
            required
            rows={14}
            className={`${p.className} font-mono text-xs`}
            defaultValue={p.defaultValue ?? current}
            spellCheck={false}
          />
        )}
      </Field>
      <div className="flex items-center gap-4">
        <SubmitButton>Save as the next version</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function HandoverSettingsForm({
  action,
  clusterId,
  settings,
  policies,
}: {
  action: FormAction;
  clusterId: string;
  settings: {
    wipe_command: string | null;
    wipe_timeout_s: number;
    attestation: "required" | "off";
    attestation_policy_id: string | null;
    attestation_timeout_s: number;
  };
  policies: Array<{ id: string; name: string; version: number }>;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state, { under: "settings", idPrefix: "handover-settings" });
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5" aria-label="Handover settings">
      <input type="hidden" name="cluster_id" value={clusterId} />
      <Field
        label="Wipe command"
        {...f("wipe_command")}
        hint="Run on each node's host by its agent (never by tenant code) after a tenant leaves, before the GPUs are reset. Empty: GPU resets only. It may report devices by printing GPUFORGE-WIPE device=… result=ok|failed lines."
      >
        {(p) => (
          <textarea
            {...p}
            rows={2}
            className={`${p.className} font-mono text-xs`}
            defaultValue={p.defaultValue ?? settings.wipe_command ?? ""}
            placeholder="/usr/local/sbin/wipe-local-disks --secure-erase"
            spellCheck={false}
          />
        )}
      </Field>
      <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        <Field label="Wipe time limit (s)" {...f("wipe_timeout_s")}>
          {(p) => (
            <input {...p} type="number" min={30} max={86400} required defaultValue={p.defaultValue ?? String(settings.wipe_timeout_s)} />
          )}
        </Field>
        <Field label="Attestation" {...f("attestation")} hint="Off returns nodes without proof">
          {(p) => (
            <select {...p} defaultValue={p.defaultValue ?? settings.attestation}>
              <option value="required">Required</option>
              <option value="off">Off (no proof)</option>
            </select>
          )}
        </Field>
        <Field label="Policy" {...f("attestation_policy_id")} hint="None: every attestation fails">
          {(p) => (
            <select {...p} defaultValue={p.defaultValue ?? settings.attestation_policy_id ?? ""}>
              <option value="">None</option>
              {policies.map((x) => (
                <option key={x.id} value={x.id}>
                  {x.name} (v{x.version})
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Attestation time limit (s)" {...f("attestation_timeout_s")}>
          {(p) => (
            <input
              {...p}
              type="number"
              min={30}
              max={86400}
              required
              defaultValue={p.defaultValue ?? String(settings.attestation_timeout_s)}
            />
          )}
        </Field>
      </div>
      <div className="flex items-center gap-4">
        <SubmitButton>Save handover settings</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}
