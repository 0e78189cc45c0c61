"use client";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { ConfirmedAction } from "./confirmed-action";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, useLiveField, type FormAction } from "./use-action-form";

interface Option {
  id: string;
  name: string;
}

/** A service account that may own the new key: its tenant (null: a platform account) and role. */
export interface OwnerOption extends Option {
  tenantId: string | null;
  role: string;
}

/**
 * How a node installs the agent with a new agent key: the install command with this control plane's
 * address and bundle signing key, up to the key itself (`… --key`); null when no signing key is configured.
 */
export interface AgentInstall {
  command: string | null;
}

export function CreateApiKeyForm({
  action,
  scopes,
  tenants = [],
  clusters = [],
  accounts = [],
  agentInstall,
}: {
  action: FormAction<{ key: string; prefix: string }>;
  scopes: Array<"operator" | "tenant" | "agent">;
  tenants?: Option[];
  clusters?: Option[];
  /** service accounts the caller may make keys for */
  accounts?: OwnerOption[];
  agentInstall?: AgentInstall;
}) {
  const { state, dispatch, formRef } = useActionForm(action);
  // least privilege first: the narrowest scope is the default, "everything" must be chosen
  const ordered = (["agent", "tenant", "operator"] as const).filter((s) => scopes.includes(s));
  const [copied, setCopied] = useState(false);
  // the expiry is chosen in two inputs and sent as one instant, which the schema names
  const f = formFields(state, { paths: { expiry: "expires_at", expires_on: "expires_at", owner: "service_account_id" } });
  // the scope decides the binding field and the expiry the date field: both are what their boxes show
  const [scope, setScope] = useLiveField(f, "scope", ordered[0]!);
  const [expiry, setExpiry] = useLiveField(f, "expiry", "90");
  const [tenant, setTenant] = useState(tenants[0]?.id);
  // a platform account owns keys of every scope; a tenant's account its own tenant's keys
  const owners = accounts.filter((a) =>
    a.tenantId === null ? scope !== "tenant" || tenants.length > 0 : scope === "tenant" && (tenants.length === 0 || a.tenantId === tenant),
  );
  const created = state.ok ? state.data : undefined;
  return (
    <div>
      <form
        ref={formRef}
        action={dispatch}
        className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4 lg:items-start"
        aria-label="Create API key"
      >
        <Field label="Name" {...f("name")} hint="Where the key is used">
          {(p) => <input {...p} required maxLength={100} placeholder="ci-pipeline" />}
        </Field>
        {scopes.length > 1 ? (
          <Field label="Scope" {...f("scope", ordered[0])}>
            {(p) => (
              <select {...p} onChange={(ev) => setScope(ev.target.value)}>
                {ordered.map((s) => (
                  <option key={s} value={s}>
                    {s === "operator"
                      ? "Operator — full control of the platform"
                      : s === "tenant"
                        ? "Tenant — one tenant's work, with admin rights"
                        : "Agent — one cluster's nodes report and run work"}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : (
          <input type="hidden" name="scope" value={scopes[0]} />
        )}
        {scope === "tenant" && tenants.length > 0 ? (
          <Field label="Tenant" {...f("tenant_id")}>
            {(p) => (
              <select {...p} required value={tenant} onChange={(ev) => setTenant(ev.target.value)}>
                {tenants.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        {scope === "agent" ? (
          <Field label="Cluster" {...f("cluster_id")} hint={clusters.length ? undefined : "Register a cluster first"}>
            {(p) => (
              <select {...p} required>
                {clusters.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        <Field label="Owner" {...f("owner")} hint="Who it acts for: it carries no more than their role, and dies with their rights">
          {(p) => (
            <select {...p}>
              <option value="me">You</option>
              {owners.map((a) => (
                <option key={a.id} value={a.id}>
                  Service account {a.name} ({a.role === "operator" ? "operator" : a.role === "tenant_admin" ? "admin" : "member"})
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Expires"
          {...f("expiry", "90")}
          hint={scope === "agent" ? "Nodes using it stop reporting when it expires: rotate before" : "The key stops working then"}
        >
          {(p) => (
            <select {...p} onChange={(ev) => setExpiry(ev.target.value)}>
              <option value="30">In 30 days</option>
              <option value="90">In 90 days</option>
              <option value="365">In a year</option>
              <option value="custom">On a date…</option>
              <option value="never">Never</option>
            </select>
          )}
        </Field>
        {expiry === "custom" ? (
          <Field label="Expiry date (UTC)" {...f("expires_on")}>
            {(p) => <input {...p} type="date" required min={new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)} />}
          </Field>
        ) : null}
        <div className="lg:pt-6">
          <SubmitButton>Create key</SubmitButton>
        </div>
        {!created ? (
          <div className="sm:col-span-2 lg:col-span-4">
            <FormMessage state={state} />
          </div>
        ) : null}
      </form>
      {created ? (
        <div role="status" className="mx-5 mb-5 rounded-lg border border-amber-200 bg-amber-50 p-4">
          <p className="text-sm font-medium text-amber-900">{state.message}</p>
          <div className="mt-3 flex flex-wrap items-center gap-2">
            <code
              data-testid="new-api-key"
              className="select-all break-all rounded bg-white px-3 py-2 font-mono text-sm text-slate-900 ring-1 ring-amber-200"
            >
              {created.key}
            </code>
            <Button
              type="button"
              variant="secondary"
              size="sm"
              onClick={() => navigator.clipboard?.writeText(created.key).then(() => setCopied(true))}
            >
              {copied ? "Copied" : "Copy"}
            </Button>
          </div>
          {scope === "agent" && agentInstall ? <InstallCommand install={agentInstall} agentKey={created.key} /> : null}
        </div>
      ) : null}
    </div>
  );
}

/** The one-line install for a node of the key's cluster: the bundle is checked against this control plane's signing key. */
function InstallCommand({ install, agentKey }: { install: AgentInstall; agentKey: string }) {
  if (!install.command)
    return (
      <p className="mt-3 text-sm text-amber-900">
        Nodes cannot install the agent yet: this control plane has no key to sign its bundle with (set BUNDLE_SIGNING_KEY or
        BUNDLE_SIGNING_KEY_FILE).
      </p>
    );
  const command = `${install.command} ${agentKey}`;
  return (
    <div className="mt-3">
      <p className="text-sm text-amber-900">
        On each node of the cluster (the installer checks the agent&apos;s signature against the key in this command):
      </p>
      <code
        data-testid="agent-install-command"
        className="mt-2 block select-all break-all rounded bg-white px-3 py-2 font-mono text-xs text-slate-900 ring-1 ring-amber-200"
      >
        {command}
      </code>
    </div>
  );
}

export function RevokeKeyButton({ action, id, prefix }: { action: FormAction; id: string; prefix: string }) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ id }}
      label="Revoke"
      confirm={{
        title: `Revoke ${prefix}…?`,
        body: "Anything using it stops working immediately. A revoked key cannot be restored.",
        confirmLabel: "Revoke key",
        keepLabel: "Keep key",
      }}
    />
  );
}
