import { parseDocument } from "yaml";
import type { FieldIssue } from "@/lib/errors";
import { jsonTextNestsDeeper, NESTING_MESSAGE, valueNestsDeeper } from "@/lib/http/json-nesting";
import { depths } from "./dag";
import { createPipelineBody } from "./schemas";
import { loopOf, validateSpec, type SpecContext } from "./spec";

// What the pipeline editor knows about the text being typed, pure: the spec it parses to (YAML or
// JSON), every problem with it (each naming its step and field), and the graph to preview. The
// server action parses with the same function, so what the editor accepts is what is submitted.

export type SpecFormat = "yaml" | "json";

export interface EditorIssue extends FieldIssue {
  /** where, for people: "steps[2] (act) · command" */
  where: string;
}

export interface PreviewNode {
  name: string;
  kind: string;
  dependsOn: string[];
  depth: number;
  loop: { from: string; label: string } | null;
}

export function parseSpecText(text: string, format: SpecFormat): { value?: unknown; error?: string } {
  if (!text.trim()) return { error: "The spec is empty: pick a template or write one" };
  // brackets nested past the bound would overflow the parsers' and validators' recursion; block
  // nesting by indentation is checked on the value (a line per level keeps it shallow enough to parse)
  if (jsonTextNestsDeeper(text)) return { error: `The spec is ${NESTING_MESSAGE.toLowerCase()}` };
  if (format === "json") {
    try {
      return { value: JSON.parse(text) };
    } catch (e) {
      return { error: `Not valid JSON: ${(e as Error).message}` };
    }
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    return { error: `Not valid YAML (line ${e.linePos?.[0]?.line ?? "?"}): ${e.message.split("\n")[0]}` };
  }
  const value: unknown = doc.toJS();
  if (valueNestsDeeper(value)) return { error: `The spec is ${NESTING_MESSAGE.toLowerCase()}` };
  return { value };
}

function where(path: string, value: unknown): string {
  const m = /^steps\[(\d+)\]\.?(.*)$/.exec(path);
  if (!m) return path || "(the spec)";
  const steps = (value as { steps?: Array<{ name?: unknown }> })?.steps;
  const name = steps?.[Number(m[1])]?.name;
  return `steps[${m[1]}]${typeof name === "string" ? ` (${name})` : ""}${m[2] ? ` · ${m[2]}` : ""}`;
}

const zodPath = (path: PropertyKey[]) => path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)).join("");

export function analyzeSpec(text: string, format: SpecFormat, ctx: SpecContext = {}): { issues: EditorIssue[]; nodes: PreviewNode[] } {
  const parsed = parseSpecText(text, format);
  if (parsed.error) return { issues: [{ path: "spec", where: "(the spec)", message: parsed.error }], nodes: [] };
  const value = parsed.value;
  const shape = createPipelineBody.safeParse(value);
  const issues: FieldIssue[] = shape.success
    ? validateSpec(shape.data, ctx)
    : shape.error.issues.map((i) => ({ path: zodPath(i.path), message: i.message }));
  const rawSteps = Array.isArray((value as { steps?: unknown })?.steps)
    ? ((value as { steps: unknown[] }).steps as Array<Record<string, unknown>>)
    : [];
  const steps = rawSteps
    .filter((s) => s && typeof s.name === "string")
    .map((s) => ({
      name: s.name as string,
      depends_on: Array.isArray(s.depends_on) ? (s.depends_on as unknown[]).filter((d): d is string => typeof d === "string") : [],
      raw: s,
    }));
  const names = new Set(steps.map((s) => s.name));
  const acyclic = shape.success ? !issues.some((i) => /cycle/i.test(i.message)) : true;
  const depth = acyclic
    ? depths(steps.map((s) => ({ name: s.name, depends_on: s.depends_on.filter((d) => names.has(d) && d !== s.name) })))
    : new Map<string, number>();
  const nodes = steps.map((s) => {
    let loop: PreviewNode["loop"] = null;
    try {
      const l = loopOf({ name: s.name, repeat: (s.raw.repeat as never) ?? 1 });
      if (l)
        loop = {
          from: l.from,
          label: l.until ? `until ${l.until.length > 40 ? `${l.until.slice(0, 39)}…` : l.until} · ≤ ${l.max}` : `× ${l.max}`,
        };
    } catch {
      loop = null;
    }
    return {
      name: s.name,
      kind: typeof s.raw.kind === "string" ? s.raw.kind : "job",
      dependsOn: s.depends_on,
      depth: depth.get(s.name) ?? 0,
      loop,
    };
  });
  return { issues: issues.map((i) => ({ ...i, where: where(i.path, value) })), nodes };
}
