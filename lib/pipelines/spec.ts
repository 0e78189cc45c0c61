import type { FieldIssue } from "@/lib/errors";
import { hostAllowed } from "./allow-list";
import { validateDag } from "./validate-dag";
import {
  ExpressionError,
  parseExpression,
  parseTemplate,
  references,
  refText,
  stripWrapper,
  templateReferences,
  templateStrings,
  type Reference,
} from "./expressions";
import type { PipelineStepInput, StepKind } from "./schemas";

// What a pipeline spec means beyond its shape, pure: loops and their bodies, which steps a step
// may read, and every check that can be made before anything runs (400s naming step and field).
// The server runs it at creation; the editor on the pipelines page runs it as you type.

export interface Loop {
  /** the body's first step; the step carrying the loop ends it */
  from: string;
  until: string | null;
  max: number;
  timeoutS: number | null;
  onExhausted: "fail" | "continue";
}

const DEFAULT_LOOP_TIMEOUT_S = 3600;
export const DEFAULT_TOOL_TIMEOUT_S = 30;
/** what a tool call's output holds: references to other fields are refused at creation */
const TOOL_OUTPUT_FIELDS = ["status", "headers", "body"] as const;

export function loopOf(step: Pick<PipelineStepInput, "name" | "repeat">): Loop | null {
  const r = step.repeat;
  if (typeof r === "number") return r > 1 ? { from: step.name, until: null, max: r, timeoutS: null, onExhausted: "continue" } : null;
  return {
    from: r.from ?? step.name,
    until: r.until ?? null,
    max: r.max,
    timeoutS: r.timeout_s ?? (r.until ? DEFAULT_LOOP_TIMEOUT_S : null),
    onExhausted: r.on_exhausted ?? (r.until ? "fail" : "continue"),
  };
}

type Named = { name: string; depends_on?: string[] };

/** Every step each step transitively depends on. */
export function ancestors(steps: Named[]): Map<string, Set<string>> {
  const deps = new Map(steps.map((s) => [s.name, s.depends_on ?? []]));
  const memo = new Map<string, Set<string>>();
  const visit = (n: string, seen: Set<string>): Set<string> => {
    if (memo.has(n)) return memo.get(n)!;
    const out = new Set<string>();
    for (const d of deps.get(n) ?? []) {
      if (seen.has(d)) continue;
      out.add(d);
      for (const a of visit(d, new Set([...seen, d]))) out.add(a);
    }
    memo.set(n, out);
    return out;
  };
  for (const s of steps) visit(s.name, new Set([s.name]));
  return memo;
}

/** A loop's body: the steps from its first step to its last, in between by dependencies. */
export function loopBody(from: string, end: string, anc: Map<string, Set<string>>): Set<string> {
  const body = new Set<string>();
  for (const [name, a] of anc) {
    const afterFrom = name === from || a.has(from);
    const beforeEnd = name === end || (anc.get(end)?.has(name) ?? false);
    if (afterFrom && beforeEnd) body.add(name);
  }
  return body;
}

export interface SpecContext {
  /** the operator's allow-list for http steps; unchecked when absent */
  allowedHosts?: string[];
  /** the tenant's endpoints by name; unchecked when absent */
  endpoints?: Set<string>;
  /** the tenant's secret names; unchecked when absent */
  secrets?: Set<string>;
  /** of those, the ones whoever submits the spec may use (their role); every one when absent */
  usableSecrets?: Set<string>;
  /** why the others may not be used, for the message */
  unusableReason?: string;
}

type StepLike = Omit<PipelineStepInput, "kind" | "priority" | "max_retries" | "repeat"> & {
  kind?: StepKind;
  repeat?: PipelineStepInput["repeat"];
};

/** Every problem of a spec that can be known before it runs, each naming its step and field. */
export function validateSpec(spec: { steps: StepLike[] }, ctx: SpecContext = {}): FieldIssue[] {
  const steps = spec.steps.map((s) => ({ ...s, kind: s.kind ?? "job", repeat: s.repeat ?? 1 }));
  const dag = validateDag(steps);
  const issues: FieldIssue[] = [...dag];
  const at = (i: number, field: string, message: string) =>
    issues.push({ path: `steps[${i}]${field ? `.${field}` : ""}`, message: `Step “${steps[i]!.name}”: ${message}` });

  steps.forEach((s, i) => kindIssues(s, (field, m) => at(i, field, m), ctx));
  if (dag.length) return issues; // references and loops need a sound graph

  const index = new Map(steps.map((s, i) => [s.name, i]));
  const anc = ancestors(steps);
  const bodyOf = new Map<string, { end: string; body: Set<string> }>();
  steps.forEach((s, i) => {
    const loop = loopOf(s);
    if (!loop) return;
    if (loop.from !== s.name && !anc.get(s.name)!.has(loop.from)) {
      return at(
        i,
        "repeat.from",
        index.has(loop.from)
          ? `the loop must start at a step this one depends on; “${loop.from}” does not come before it`
          : `no step named “${loop.from}”`,
      );
    }
    const body = loopBody(loop.from, s.name, anc);
    for (const b of body) {
      const other = bodyOf.get(b);
      if (other)
        return at(i, "repeat", `its loop overlaps the loop ending at “${other.end}” (both hold “${b}”); loops cannot nest or overlap`);
    }
    const entry = { end: s.name, body };
    for (const b of body) bodyOf.set(b, entry);
    if (loop.until) checkExpression(stripWrapper(loop.until), `repeat.until`, i, s.name, true);
  });
  // nothing outside a loop may start in the middle of it: depend on the step that ends it
  steps.forEach((s, i) =>
    (s.depends_on ?? []).forEach((d, j) => {
      const loop = bodyOf.get(d);
      if (loop && loop.end !== d && !loop.body.has(s.name))
        at(i, `depends_on[${j}]`, `“${d}” is inside the loop ending at “${loop.end}”; depend on “${loop.end}” to run after the loop`);
    }),
  );

  /** A secret goes into a header whole, `${secrets.NAME}`: never inside an expression that could test, compare or combine it. */
  function wholeSecretsOnly(src: string, field: string, i: number) {
    let parts;
    try {
      parts = parseTemplate(src);
    } catch {
      return; // checkExpression names the syntax error
    }
    for (const part of parts) {
      if (typeof part === "string" || (part.expr.t === "ref" && part.expr.root === "secrets")) continue;
      const used = references(part.expr).filter((r) => r.root === "secrets");
      if (used.length)
        at(
          i,
          field,
          `${refText("secrets", used[0]!.path)}: a secret is inserted whole, as \${${refText("secrets", used[0]!.path)}} on its own; it is never compared, tested or combined in an expression`,
        );
    }
  }

  function checkExpression(src: string, field: string, i: number, self: string, isCondition: boolean, secretsAllowed = false) {
    let refs: Reference[];
    try {
      refs = isCondition ? references(parseExpression(src)) : templateReferences(parseTemplate(src));
    } catch (e) {
      if (e instanceof ExpressionError) return at(i, field, e.message);
      throw e;
    }
    for (const r of refs) checkReference(r, field, i, self, isCondition, secretsAllowed);
  }

  function checkReference(r: Reference, field: string, i: number, self: string, isCondition: boolean, secretsAllowed: boolean) {
    const text = refText(r.root, r.path);
    if (r.root === "loop" || r.root === "pipeline") {
      const ok =
        r.root === "loop"
          ? r.path.length === 1 && r.path[0] === "iteration"
          : r.path.length === 1 && (r.path[0] === "id" || r.path[0] === "name");
      if (!ok)
        at(i, field, `${text}: ${r.root === "loop" ? "loops offer loop.iteration" : "pipelines offer pipeline.id and pipeline.name"}`);
      return;
    }
    if (r.root === "secrets") {
      if (!secretsAllowed)
        return at(
          i,
          field,
          `${text}: secrets can be used only in an http step's headers (they are never written into commands, bodies or logs)`,
        );
      const name = r.path[0];
      if (r.path.length !== 1 || typeof name !== "string") return at(i, field, `${text}: write secrets.NAME`);
      if (ctx.secrets && !ctx.secrets.has(name)) return at(i, field, `${text}: no secret named ${name} (add it under Pipelines → Secrets)`);
      if (ctx.usableSecrets && !ctx.usableSecrets.has(name))
        at(i, field, `${text}: ${ctx.unusableReason ?? "your role may not use this secret (its admins chose who may)"}`);
      return;
    }
    if (r.root !== "steps") return at(i, field, `${text}: references start with steps., loop., pipeline. or secrets.`);
    const [step, outputs, first] = r.path;
    if (typeof step !== "string" || !index.has(step)) return at(i, field, `${text}: no step named “${String(step)}”`);
    if (outputs !== "outputs") return at(i, field, `${text}: write steps.${step}.outputs…`);
    const before = anc.get(self)!.has(step);
    const sameLoop = bodyOf.get(self) && bodyOf.get(self) === bodyOf.get(step);
    const itself = step === self && isCondition;
    if (!before && !sameLoop && !itself) return at(i, field, `${text}: “${step}” does not run before “${self}”; add it to depends_on`);
    if (!before && !itself && !r.hasDefault) {
      return at(i, field, `${text}: in the loop's first iteration “${step}” has no output yet; give a default, e.g. \${${text} ?? ""}`);
    }
    const target = steps[index.get(step)!]!;
    if (typeof first === "string") {
      if (target.kind !== "job" && !(TOOL_OUTPUT_FIELDS as readonly string[]).includes(first)) {
        at(i, field, `${text}: a tool call's output has status, headers and body; not “${first}”`);
      } else if (target.kind === "job" && target.outputs && !target.outputs.includes(first)) {
        at(i, field, `${text}: “${step}” declares the outputs ${target.outputs.join(", ") || "(none)"}; not “${first}”`);
      }
    }
  }

  steps.forEach((s, i) => {
    if (s.command) checkExpression(s.command, "command", i, s.name, false);
    for (const [k, v] of Object.entries(s.env ?? {})) checkExpression(v, `env.${k}`, i, s.name, false);
    if (s.request?.url) checkExpression(s.request.url, "request.url", i, s.name, false);
    for (const [k, v] of Object.entries(s.request?.headers ?? {})) {
      checkExpression(v, `request.headers.${k}`, i, s.name, false, s.kind === "http");
      wholeSecretsOnly(v, `request.headers.${k}`, i);
    }
    for (const t of templateStrings(s.request?.body, "request.body")) checkExpression(t.src, t.path, i, s.name, false);
  });
  return issues;
}

function kindIssues(s: StepLike & { kind: StepKind }, at: (field: string, message: string) => void, ctx: SpecContext) {
  const forbid = (fields: Array<keyof StepLike>, why: string) => {
    for (const f of fields) if (s[f] !== undefined) at(f, why);
  };
  const req = s.request;
  if (s.kind === "job") {
    if (s.gpu_count === undefined) at("gpu_count", "required for a job step");
    if (s.gpu_type === undefined) at("gpu_type", "required for a job step");
    forbid(["request", "timeout_s"], "only tool-call steps (http, inference) take this");
    if (s.retry?.on_status) at("retry.on_status", "job steps retry on exit codes (on_exit_codes)");
    return;
  }
  forbid(
    ["gpu_count", "gpu_type", "image", "command", "env", "duration_s", "outputs"],
    `${s.kind} steps run on the control plane without GPUs; their output is the response`,
  );
  if (s.retry?.on_exit_codes) at("retry.on_exit_codes", "tool calls retry on HTTP statuses (on_status)");
  if (!req) return at("request", `required for ${s.kind === "http" ? "an http" : "an inference"} step`);
  if (s.kind === "http") {
    if (!req.url) at("request.url", "required for an http step");
    if (req.endpoint !== undefined) at("request.endpoint", "only inference steps name an endpoint");
    if (req.path !== undefined) at("request.path", "only inference steps take a path; put it in the url");
    if (req.url && ctx.allowedHosts) {
      // the host is checked now when the spec spells it out; a templated one when the call is made
      const literal = !/^[a-z]+:\/\/[^/]*\$\{/i.test(req.url) && !req.url.startsWith("${");
      if (literal) {
        let url: URL | null = null;
        try {
          url = new URL(req.url);
        } catch {
          at("request.url", "not a URL");
        }
        if (url && url.protocol !== "http:" && url.protocol !== "https:") at("request.url", "http:// or https:// only");
        else if (url && !hostAllowed(url, ctx.allowedHosts))
          at(
            "request.url",
            `${url.host} is not on the operator's allow-list for tool calls${ctx.allowedHosts.length ? ` (${ctx.allowedHosts.join(", ")})` : " (it is empty)"}`,
          );
      }
    }
  } else {
    if (!req.endpoint) at("request.endpoint", "required for an inference step: one of your endpoints, by name");
    else if (ctx.endpoints && !ctx.endpoints.has(req.endpoint)) at("request.endpoint", `you have no endpoint named “${req.endpoint}”`);
    if (req.url !== undefined) at("request.url", "inference steps name an endpoint, not a URL");
    if (req.headers !== undefined) at("request.headers", "inference steps send no headers of their own");
    if (req.body === undefined) at("request.body", "required for an inference step (the request to the model)");
  }
}
