// Expressions of pipeline specs, pure: parsing, static references (for validation at creation) and
// evaluation against the outputs steps posted. No I/O, so the browser editor validates with the
// very code the server runs.
//
// Syntax (documented in the README and on the pipelines page):
//   templates   "python act.py --plan '${steps.plan.outputs.file}'"   ($${ writes a literal ${)
//   references  steps.<step>.outputs.<field>[0].<field> · steps["odd.name"].outputs · loop.iteration
//               · pipeline.id · pipeline.name · secrets.<NAME> (http headers only, whole: ${secrets.NAME})
//   conditions  == != < <= > >= && || ! ( ) ?? with numbers, "strings", true, false, null
// `a ?? b` is b when a is missing or null (a step that has not run yet in a loop's first iteration).

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export type Expr =
  | { t: "lit"; v: Json }
  | { t: "ref"; root: string; path: Array<string | number>; pos: number }
  | { t: "not"; e: Expr }
  | { t: "bin"; op: "&&" | "||" | "??" | "==" | "!=" | "<" | "<=" | ">" | ">="; l: Expr; r: Expr };

export class ExpressionError extends Error {
  constructor(
    message: string,
    /** a reference that could not be resolved (as opposed to a type error or bad syntax) */
    readonly missing = false,
  ) {
    super(message);
    this.name = "ExpressionError";
  }
}

type Tok = { k: "num" | "str" | "id" | "op" | "end"; v: string; pos: number };

const OPS = ["&&", "||", "??", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", "[", "]", "."];

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (/[0-9]/.test(c) || (c === "-" && /[0-9]/.test(src[i + 1] ?? ""))) {
      i++;
      while (
        i < src.length &&
        /[0-9.eE+-]/.test(src[i]!) &&
        !(src[i] === "-" && !/[eE]/.test(src[i - 1]!)) &&
        !(src[i] === "+" && !/[eE]/.test(src[i - 1]!))
      )
        i++;
      const text = src.slice(start, i);
      if (!Number.isFinite(Number(text))) throw new ExpressionError(`not a number: ${text}`);
      out.push({ k: "num", v: text, pos: start });
      continue;
    }
    if (c === '"' || c === "'") {
      i++;
      let s = "";
      while (i < src.length && src[i] !== c) {
        if (src[i] === "\\" && i + 1 < src.length) {
          const n = src[i + 1]!;
          s += n === "n" ? "\n" : n === "t" ? "\t" : n;
          i += 2;
        } else s += src[i++];
      }
      if (i >= src.length) throw new ExpressionError(`unterminated string starting at ${start + 1}`);
      i++;
      out.push({ k: "str", v: s, pos: start });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      while (i < src.length && /[A-Za-z0-9_-]/.test(src[i]!)) i++;
      out.push({ k: "id", v: src.slice(start, i), pos: start });
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new ExpressionError(`unexpected “${c}” at ${i + 1}`);
    i += op.length;
    out.push({ k: "op", v: op, pos: start });
  }
  out.push({ k: "end", v: "", pos: src.length });
  return out;
}

export function parseExpression(src: string): Expr {
  if (src.length > 2000) throw new ExpressionError("expression longer than 2000 characters");
  const toks = tokenize(src);
  let p = 0;
  const peek = () => toks[p]!;
  const eat = (v: string) => {
    const t = peek();
    if (t.k === "op" && t.v === v) {
      p++;
      return true;
    }
    return false;
  };
  const expect = (v: string) => {
    if (!eat(v)) throw new ExpressionError(`expected “${v}” at ${peek().pos + 1}${peek().k === "end" ? " (end of expression)" : ""}`);
  };
  const binary = (ops: string[], next: () => Expr) => (): Expr => {
    let l = next();
    for (;;) {
      const t = peek();
      if (t.k !== "op" || !ops.includes(t.v)) return l;
      p++;
      l = { t: "bin", op: t.v as "&&", l, r: next() };
    }
  };
  const primary = (): Expr => {
    const t = peek();
    if (t.k === "num") {
      p++;
      return { t: "lit", v: Number(t.v) };
    }
    if (t.k === "str") {
      p++;
      return { t: "lit", v: t.v };
    }
    if (eat("(")) {
      const e = coalesce();
      expect(")");
      return e;
    }
    if (t.k === "id") {
      p++;
      if (t.v === "true" || t.v === "false") return { t: "lit", v: t.v === "true" };
      if (t.v === "null") return { t: "lit", v: null };
      const path: Array<string | number> = [];
      for (;;) {
        if (eat(".")) {
          const n = peek();
          if (n.k !== "id") throw new ExpressionError(`expected a name after “.” at ${n.pos + 1}`);
          p++;
          path.push(n.v);
        } else if (eat("[")) {
          const n = peek();
          if (n.k === "num" && Number.isInteger(Number(n.v))) path.push(Number(n.v));
          else if (n.k === "str") path.push(n.v);
          else throw new ExpressionError(`expected an index or a "name" inside [ ] at ${n.pos + 1}`);
          p++;
          expect("]");
        } else break;
      }
      return { t: "ref", root: t.v, path, pos: t.pos };
    }
    throw new ExpressionError(t.k === "end" ? "the expression ends too early" : `unexpected “${t.v}” at ${t.pos + 1}`);
  };
  const unary = (): Expr => (eat("!") ? { t: "not", e: unary() } : primary());
  const comparison = (): Expr => {
    const l = unary();
    const t = peek();
    if (t.k === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(t.v)) {
      p++;
      return { t: "bin", op: t.v as "==", l, r: unary() };
    }
    return l;
  };
  const and = binary(["&&"], comparison);
  const or = binary(["||"], and);
  const coalesce = binary(["??"], or);
  const e = coalesce();
  if (peek().k !== "end") throw new ExpressionError(`unexpected “${peek().v}” at ${peek().pos + 1}`);
  return e;
}

/** A template string split into literal text and `${…}` expressions. */
export type Template = Array<string | { expr: Expr; src: string }>;

export function parseTemplate(src: string): Template {
  const out: Template = [];
  let text = "";
  let i = 0;
  while (i < src.length) {
    if (src.startsWith("$${", i)) {
      text += "${";
      i += 3;
      continue;
    }
    if (src.startsWith("${", i)) {
      const end = closingBrace(src, i + 2);
      if (end < 0) throw new ExpressionError(`“\${” at ${i + 1} is never closed with “}”`);
      if (text) out.push(text);
      text = "";
      const inner = src.slice(i + 2, end);
      out.push({ expr: parseExpression(inner), src: inner.trim() });
      i = end + 1;
      continue;
    }
    text += src[i++];
  }
  if (text) out.push(text);
  return out;
}

function closingBrace(src: string, from: number): number {
  let quote: string | null = null;
  for (let i = from; i < src.length; i++) {
    const c = src[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "}") return i;
  }
  return -1;
}

export interface Reference {
  root: string;
  path: Array<string | number>;
  /** written with a `??` fallback: a missing value is not an error */
  hasDefault: boolean;
}

/** Every reference an expression reads. */
export function references(e: Expr, hasDefault = false): Reference[] {
  switch (e.t) {
    case "lit":
      return [];
    case "ref":
      return [{ root: e.root, path: e.path, hasDefault }];
    case "not":
      return references(e.e, hasDefault);
    case "bin":
      return e.op === "??"
        ? [...references(e.l, true), ...references(e.r, hasDefault)]
        : [...references(e.l, hasDefault), ...references(e.r, hasDefault)];
  }
}

export function templateReferences(t: Template): Reference[] {
  return t.flatMap((part) => (typeof part === "string" ? [] : references(part.expr)));
}

/**
 * A tenant's secret as expressions see it: its name, never its value. Evaluation hands it on only
 * whole, into an http step's header (renderHeader); the worker puts the value in at the very last
 * moment, after the allow-list check, just before the request leaves (run-tool-calls.ts). So no
 * expression can test, compare, slice or quote a secret, and no error or output can carry any part
 * of one: using it any other way is an error that names the secret alone.
 */
export class SecretReference {
  constructor(readonly name: string) {}
}

/** What an expression may come to inside the evaluator: JSON, or a secret passed on by name. */
type Value = Json | SecretReference;

const secretMisuse = (r: SecretReference) =>
  new ExpressionError(
    `secrets.${r.name} can only be inserted whole into an http step's header, as \${secrets.${r.name}}: a secret is never compared, tested or combined`,
  );

/** What expressions can read: each step's latest output, the loop iteration, the pipeline, and which secrets exist. */
export interface Scope {
  outputs: Record<string, Json | undefined>;
  iteration: number;
  pipeline: { id: string; name: string };
  /** the tenant's secret names (their values never enter an expression); absent: none may be used */
  secretNames?: ReadonlySet<string>;
}

export const refText = (root: string, path: Array<string | number>) =>
  root +
  path.map((x) => (typeof x === "number" ? `[${x}]` : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(x) ? `.${x}` : `[${JSON.stringify(x)}]`)).join("");

function lookup(root: string, path: Array<string | number>, scope: Scope): Value {
  const whole = refText(root, path);
  if (root === "loop") {
    if (path.length === 1 && path[0] === "iteration") return scope.iteration;
    throw new ExpressionError(`${whole}: loops offer loop.iteration only`);
  }
  if (root === "pipeline") {
    if (path.length === 1 && (path[0] === "id" || path[0] === "name")) return scope.pipeline[path[0]];
    throw new ExpressionError(`${whole}: pipelines offer pipeline.id and pipeline.name`);
  }
  if (root === "secrets") {
    const name = path[0];
    if (path.length !== 1 || typeof name !== "string") throw new ExpressionError(`${whole}: write secrets.NAME`);
    if (!scope.secretNames?.has(name)) throw new ExpressionError(`${whole}: no secret named ${name}`, true);
    return new SecretReference(name);
  }
  if (root !== "steps") throw new ExpressionError(`${whole}: references start with steps., loop., pipeline. or secrets.`);
  const [step, outputs, ...rest] = path;
  if (typeof step !== "string" || outputs !== "outputs") throw new ExpressionError(`${whole}: write steps.<step>.outputs…`);
  if (!(step in scope.outputs)) throw new ExpressionError(`${whole}: no step named ${step}`);
  let v = scope.outputs[step];
  if (v === undefined) throw new ExpressionError(`${whole}: step ${step} has no output yet`, true);
  let at = `steps.${step}.outputs`;
  for (const [i, key] of rest.entries()) {
    if (typeof key === "number") {
      if (!Array.isArray(v)) throw new ExpressionError(`${whole}: ${at} is not a list`, true);
      if (key < 0 || key >= v.length) throw new ExpressionError(`${whole}: ${at} has ${v.length} item(s), no [${key}]`, true);
      v = v[key];
    } else {
      if (v === null || typeof v !== "object" || Array.isArray(v)) throw new ExpressionError(`${whole}: ${at} is not an object`, true);
      if (!(key in v)) {
        const keys = Object.keys(v);
        throw new ExpressionError(
          `${whole}: ${at} has no field “${key}”${keys.length ? ` (it has: ${keys.slice(0, 10).join(", ")})` : " (it is empty)"}`,
          true,
        );
      }
      v = (v as Record<string, Json>)[key];
    }
    at = refText("steps", [step, "outputs", ...rest.slice(0, i + 1)]);
  }
  return v as Json;
}

const kindOf = (v: Json) => (v === null ? "null" : Array.isArray(v) ? "list" : typeof v);

function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, Json>)[k]!, (b as Record<string, Json>)[k]!));
}

function bool(v: Value, what: string): boolean {
  if (v instanceof SecretReference) throw secretMisuse(v);
  if (typeof v !== "boolean") throw new ExpressionError(`${what} needs true or false, got ${kindOf(v)} ${JSON.stringify(v)?.slice(0, 40)}`);
  return v;
}

/** A value some operator works on: never a secret. */
function plain(v: Value): Json {
  if (v instanceof SecretReference) throw secretMisuse(v);
  return v;
}

/** An expression's value: JSON, or a secret passed on whole (only a bare `secrets.NAME` is one). */
function evaluateValue(e: Expr, scope: Scope): Value {
  switch (e.t) {
    case "lit":
      return e.v;
    case "ref":
      return lookup(e.root, e.path, scope);
    case "not":
      return !bool(evaluateValue(e.e, scope), "!");
    case "bin": {
      if (e.op === "??") {
        try {
          const l = plain(evaluateValue(e.l, scope));
          return l === null ? plain(evaluateValue(e.r, scope)) : l;
        } catch (err) {
          if (err instanceof ExpressionError && err.missing) return plain(evaluateValue(e.r, scope));
          throw err;
        }
      }
      if (e.op === "&&") return bool(evaluateValue(e.l, scope), "&&") && bool(evaluateValue(e.r, scope), "&&");
      if (e.op === "||") return bool(evaluateValue(e.l, scope), "||") || bool(evaluateValue(e.r, scope), "||");
      const l = plain(evaluateValue(e.l, scope));
      const r = plain(evaluateValue(e.r, scope));
      if (e.op === "==") return deepEqual(l, r);
      if (e.op === "!=") return !deepEqual(l, r);
      if (!((typeof l === "number" && typeof r === "number") || (typeof l === "string" && typeof r === "string"))) {
        throw new ExpressionError(`${e.op} compares two numbers or two strings, not ${kindOf(l)} and ${kindOf(r)}`);
      }
      return e.op === "<" ? l < r : e.op === "<=" ? l <= r : e.op === ">" ? l > r : l >= r;
    }
  }
}

/** An expression's JSON value; a secret here (anywhere but whole in a header) is an error naming it alone. */
export function evaluate(e: Expr, scope: Scope): Json {
  return plain(evaluateValue(e, scope));
}

/** A loop condition: must come out true or false. */
export function evaluateCondition(src: string, scope: Scope): boolean {
  const v = evaluate(parseExpression(stripWrapper(src)), scope);
  if (typeof v !== "boolean")
    throw new ExpressionError(`the condition came out ${kindOf(v)} ${JSON.stringify(v)?.slice(0, 60)}, not true or false`);
  return v;
}

/** `${a} == 1` and `a == 1` mean the same in a condition: references may be wrapped or bare. */
export function stripWrapper(src: string): string {
  return src.replace(/(?<!\$)\$\{([^}]*)\}/g, "($1)");
}

export function renderTemplate(src: string, scope: Scope): string {
  return parseTemplate(src)
    .map((part) => {
      if (typeof part === "string") return part;
      const v = evaluate(part.expr, scope);
      return typeof v === "string" ? v : JSON.stringify(v);
    })
    .join("");
}

/** A header's value as rendered: text, with each secret still a reference the worker fills in last. */
export type HeaderValue = Array<string | SecretReference>;

/** Renders a header's template: secrets stay references (whole, `${secrets.NAME}`), everything else becomes text. */
export function renderHeader(src: string, scope: Scope): HeaderValue {
  const out: HeaderValue = [];
  for (const part of parseTemplate(src)) {
    if (typeof part === "string") out.push(part);
    else {
      const v = evaluateValue(part.expr, scope);
      out.push(v instanceof SecretReference ? v : typeof v === "string" ? v : JSON.stringify(v));
    }
  }
  return out;
}

/**
 * Resolves the templates inside a JSON value (a request body): a string that is exactly one `${…}`
 * takes the value's own JSON type; other strings are rendered as text. Secrets never render here.
 */
export function renderJson(value: Json, scope: Scope): Json {
  if (typeof value === "string") {
    const t = parseTemplate(value);
    if (t.length === 1 && typeof t[0] !== "string") return evaluate(t[0]!.expr, scope);
    return renderTemplate(value, scope);
  }
  if (Array.isArray(value)) return value.map((v) => renderJson(v, scope));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderJson(v, scope)]));
  return value;
}

/** Every template string inside a JSON value, with its path (for validation). */
export function templateStrings(value: unknown, path: string): Array<{ path: string; src: string }> {
  if (typeof value === "string") return value.includes("${") ? [{ path, src: value }] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => templateStrings(v, `${path}[${i}]`));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => templateStrings(v, `${path}.${k}`));
  return [];
}
