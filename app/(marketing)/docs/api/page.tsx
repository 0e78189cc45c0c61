import { buildOpenApiDocument } from "@/lib/api/openapi";

export const metadata = {
  title: "API reference",
  description: "The GPUForge REST API, generated from the same schemas the server validates with.",
};

type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: unknown }>;
  requestBody?: { content: { "application/json": { schema: unknown } } };
  responses: Record<string, { description: string }>;
};

const methodTone: Record<string, string> = {
  get: "bg-sky-50 text-sky-700 ring-sky-600/20",
  post: "bg-emerald-50 text-emerald-700 ring-emerald-600/20",
  put: "bg-amber-50 text-amber-800 ring-amber-600/20",
  patch: "bg-amber-50 text-amber-800 ring-amber-600/20",
  delete: "bg-red-50 text-red-700 ring-red-600/20",
};

export default function ApiReference() {
  const doc = buildOpenApiDocument();
  const ops: Array<{ method: string; path: string; op: Operation }> = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) ops.push({ method, path, op });
  }
  const tags = [...new Set(ops.map((o) => o.op.tags?.[0] ?? "Other"))];
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  return (
    <main className="mx-auto max-w-5xl px-6 py-12">
      <h1 className="text-3xl font-semibold tracking-tight text-slate-900">API reference</h1>
      <p className="mt-3 max-w-3xl text-slate-600">
        {doc.info.description} Authenticate with <code className="rounded bg-slate-100 px-1">Authorization: Bearer gf_…</code>. The
        machine-readable document is at{" "}
        <a className="text-indigo-700 underline" href="/api/openapi.json">
          /api/openapi.json
        </a>
        .
      </p>
      <nav aria-label="Sections" className="mt-6 flex flex-wrap gap-2">
        {tags.map((t) => (
          <a key={t} href={`#${t}`} className="rounded-full px-3 py-1 text-sm ring-1 ring-slate-200 hover:bg-slate-50">
            {t}
          </a>
        ))}
      </nav>
      {tags.map((tag) => (
        <section key={tag} id={tag} aria-labelledby={`h-${tag}`} className="mt-12">
          <h2 id={`h-${tag}`} className="text-xl font-semibold text-slate-900">
            {tag}
          </h2>
          <div className="mt-4 space-y-4">
            {ops
              .filter((o) => (o.op.tags?.[0] ?? "Other") === tag)
              .map(({ method, path, op }) => (
                <article key={op.operationId} id={op.operationId} className="rounded-lg p-5 ring-1 ring-slate-200">
                  <h3 className="flex flex-wrap items-center gap-3">
                    <span
                      className={`rounded px-2 py-0.5 font-mono text-xs font-semibold uppercase ring-1 ring-inset ${methodTone[method] ?? ""}`}
                    >
                      {method}
                    </span>
                    <code className="font-mono text-sm text-slate-900">{path}</code>
                  </h3>
                  <p className="mt-2 text-sm text-slate-700">{op.summary}</p>
                  {op.description ? <p className="mt-1 text-xs text-slate-500">{op.description}</p> : null}
                  {op.parameters?.length ? (
                    <p className="mt-3 text-xs text-slate-600">
                      Parameters:{" "}
                      {op.parameters.map((p) => (
                        <code key={p.in + p.name} className="mr-2 rounded bg-slate-100 px-1">
                          {p.name}
                          {p.required ? "" : "?"} ({p.in})
                        </code>
                      ))}
                    </p>
                  ) : null}
                  {op.requestBody ? (
                    <details className="mt-3">
                      <summary className="cursor-pointer text-xs font-medium text-indigo-700">Request body</summary>
                      <pre className="mt-2 overflow-x-auto rounded bg-slate-900 p-3 text-xs text-slate-100">
                        {JSON.stringify(resolve(op.requestBody.content["application/json"].schema, schemas), null, 2)}
                      </pre>
                    </details>
                  ) : null}
                  <p className="mt-3 text-xs text-slate-500">
                    Responses:{" "}
                    {Object.entries(op.responses).map(([code, r]) => (
                      <span key={code} className="mr-3">
                        <strong>{code}</strong> {r.description}
                      </span>
                    ))}
                  </p>
                </article>
              ))}
          </div>
        </section>
      ))}
    </main>
  );
}

function resolve(schema: unknown, schemas: Record<string, unknown>): unknown {
  const ref = (schema as { $ref?: string })?.$ref;
  return ref ? schemas[ref.split("/").pop() ?? ""] : schema;
}
