"use client";
import { useRouter } from "next/navigation";
import { useDeferredValue, useEffect, useMemo, useState } from "react";
import { stringify } from "yaml";
import { FormMessage, SubmitButton } from "@/components/forms/form-parts";
import { useActionForm, type FormAction } from "@/components/forms/use-action-form";
import { cn } from "@/components/ui/cn";
import { analyzeSpec, parseSpecText, type SpecFormat } from "@/lib/pipelines/editor";
import { PIPELINE_TEMPLATES } from "@/lib/pipelines/templates";
import { PipelineDag } from "./pipeline-dag";

// The pipeline editor: YAML or JSON, checked as you type with the server's own schemas and spec
// rules (each problem names its step and field), the graph drawn live beside it, and templates to
// start from. Submitting runs the same checks again on the server.

export function PipelineEditor({
  action,
  gpuTypes,
  endpoints,
  secrets,
  usableSecrets,
  allowedHosts,
}: {
  action: FormAction<{ id: string }>;
  gpuTypes: string[];
  endpoints: string[];
  secrets: string[];
  /** the secrets the signed-in person's role may use (each secret's admins chose who may) */
  usableSecrets: string[];
  allowedHosts: string[];
}) {
  const router = useRouter();
  const [gpuType, setGpuType] = useState(gpuTypes[0] ?? "H100");
  const [endpoint, setEndpoint] = useState(endpoints[0]);
  const ctx = { gpuType, endpoint };
  const [format, setFormat] = useState<SpecFormat>("yaml");
  const [template, setTemplate] = useState(PIPELINE_TEMPLATES[1]!.id);
  const [text, setText] = useState(() =>
    stringify(PIPELINE_TEMPLATES[1]!.spec({ gpuType: gpuTypes[0] ?? "H100", endpoint: endpoints[0] })),
  );
  const deferred = useDeferredValue(text);
  const checkCtx = useMemo(
    () => ({
      endpoints: new Set(endpoints),
      secrets: new Set(secrets),
      usableSecrets: new Set(usableSecrets),
      unusableReason: "this secret is for tenant admins' pipelines (an admin chooses who may use each secret)",
      allowedHosts,
    }),
    [endpoints, secrets, usableSecrets, allowedHosts],
  );
  const { issues, nodes } = useMemo(() => analyzeSpec(deferred, format, checkCtx), [deferred, format, checkCtx]);
  const { state, dispatch } = useActionForm(action, false);
  const serverIssues = Object.entries(state.fieldErrors ?? {}).filter(([path]) => path !== "spec" || !issues.length);

  useEffect(() => {
    if (state.ok && state.data?.id) router.push(`/dashboard/pipelines/${state.data.id}`);
  }, [state, router]);

  const load = (id: string) => {
    const t = PIPELINE_TEMPLATES.find((x) => x.id === id)!;
    setTemplate(id);
    const spec = t.spec(ctx);
    setText(format === "yaml" ? stringify(spec) : JSON.stringify(spec, null, 2));
  };
  const switchFormat = (next: SpecFormat) => {
    if (next === format) return;
    const parsed = parseSpecText(text, format);
    if (!parsed.error) setText(next === "yaml" ? stringify(parsed.value) : JSON.stringify(parsed.value, null, 2));
    setFormat(next);
  };

  return (
    <form action={dispatch} aria-label="New pipeline" className="space-y-4 p-5">
      <fieldset>
        <legend className="mb-2 text-sm font-medium text-slate-800">Start from a template</legend>
        <div className="mb-3 flex flex-wrap gap-4 text-sm">
          <label className="flex items-center gap-2">
            <span className="text-slate-700">GPU type</span>
            <select
              value={gpuType}
              onChange={(e) => setGpuType(e.target.value)}
              className="rounded-md border-0 py-1 pl-2 pr-8 text-sm ring-1 ring-slate-300"
            >
              {(gpuTypes.length ? gpuTypes : ["H100"]).map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </label>
          <label className="flex items-center gap-2">
            <span className="text-slate-700">Endpoint</span>
            <select
              value={endpoint ?? ""}
              onChange={(e) => setEndpoint(e.target.value || undefined)}
              className="rounded-md border-0 py-1 pl-2 pr-8 text-sm ring-1 ring-slate-300"
            >
              {endpoints.length ? (
                endpoints.map((t) => <option key={t}>{t}</option>)
              ) : (
                <option value="">none yet (create one on Endpoints)</option>
              )}
            </select>
          </label>
          <span className="self-center text-xs text-slate-500">Templates are filled in with these.</span>
        </div>
        <div className="grid gap-2 sm:grid-cols-3">
          {PIPELINE_TEMPLATES.map((t) => (
            <button
              key={t.id}
              type="button"
              data-testid={`template-${t.id}`}
              aria-pressed={template === t.id}
              onClick={() => load(t.id)}
              className={cn(
                "rounded-lg p-3 text-left ring-1 transition-colors",
                template === t.id ? "bg-indigo-50 ring-indigo-400" : "bg-white ring-slate-200 hover:bg-slate-50",
              )}
            >
              <span className="block text-sm font-semibold text-slate-900">{t.title}</span>
              <span className="mt-1 block text-xs text-slate-600">{t.description}</span>
            </button>
          ))}
        </div>
      </fieldset>
      <div className="grid gap-4 xl:grid-cols-2">
        <div className="min-w-0">
          <div className="mb-1 flex items-center justify-between gap-2">
            <label htmlFor="pipeline-spec" className="text-sm font-medium text-slate-800">
              Spec
            </label>
            <div role="radiogroup" aria-label="Format" className="inline-flex rounded-md ring-1 ring-slate-300">
              {(["yaml", "json"] as const).map((f) => (
                <button
                  key={f}
                  type="button"
                  role="radio"
                  aria-checked={format === f}
                  onClick={() => switchFormat(f)}
                  className={cn("px-3 py-1 text-xs font-medium uppercase", format === f ? "bg-slate-900 text-white" : "text-slate-700")}
                >
                  {f}
                </button>
              ))}
            </div>
          </div>
          <textarea
            id="pipeline-spec"
            name="spec"
            value={text}
            onChange={(e) => setText(e.target.value)}
            spellCheck={false}
            wrap="off"
            aria-invalid={issues.length > 0}
            aria-describedby="pipeline-issues"
            className="block h-[28rem] w-full resize-y rounded-md border-0 bg-slate-950 p-3 font-mono text-xs leading-5 text-slate-100 shadow-sm ring-1 ring-slate-300 focus:ring-2 focus:ring-indigo-600"
          />
          <input type="hidden" name="format" value={format} />
        </div>
        <div className="min-w-0 space-y-3">
          <div>
            <p className="mb-1 text-sm font-medium text-slate-800">Preview</p>
            <div className="rounded-md bg-slate-50 ring-1 ring-slate-200" data-testid="dag-preview">
              <PipelineDag fit label="Preview of the pipeline's steps" nodes={nodes} />
            </div>
          </div>
          <div id="pipeline-issues" aria-live="polite">
            {issues.length === 0 && serverIssues.length === 0 ? (
              <p data-testid="spec-valid" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
                Valid: {nodes.length} step{nodes.length === 1 ? "" : "s"}. Job steps are checked against your quota and the fleet when you
                start it.
              </p>
            ) : (
              <ul
                data-testid="spec-issues"
                className="max-h-64 space-y-1 overflow-y-auto rounded-md bg-red-50 px-3 py-2 text-sm text-red-800"
              >
                {issues.map((i) => (
                  <li key={`${i.path}:${i.message}`}>
                    <code className="mr-1 text-xs font-semibold">{i.where}</code>
                    {i.message.replace(/^Step “[^”]*”: /, "")}
                  </li>
                ))}
                {serverIssues.map(([path, message]) => (
                  <li key={`server:${path}`}>
                    <code className="mr-1 text-xs font-semibold">{path}</code>
                    {message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        </div>
      </div>
      <div className="flex flex-wrap items-center gap-3">
        <SubmitButton>Start pipeline</SubmitButton>
        <FormMessage state={state} />
        <p className="text-xs text-slate-500">
          Expressions: <code>{"${steps.<step>.outputs.<field>}"}</code>, <code>{"${loop.iteration}"}</code>,{" "}
          <code>{"${secrets.NAME}"}</code> (whole, in http headers), <code>{"a ?? b"}</code> for a default.
        </p>
      </div>
    </form>
  );
}
