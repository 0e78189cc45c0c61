import type { Json } from "../expressions";

// Secrets are never echoed: whatever a tool call stores (its output, an error, a log line) has
// every secret value it sent replaced by the secret's name first, even when the server called
// echoes the request back — and so has any run of FRAGMENT or more characters of a secret, so a
// server that quotes part of a key ("Incorrect API key provided: sk-abc…") gives none of it away.
// Expressions never see a value to begin with (lib/pipelines/expressions.ts, SecretReference).

/** A run of a secret this long, anywhere, is masked (secrets of at least 2 × FRAGMENT characters; shorter ones whole). */
const FRAGMENT = 6;
const MIN_SECRET = 4;

export function redactText(text: string, secrets: Record<string, string>): string {
  // which secret covers each character: the longest first, so one containing another is named whole
  const owner = new Array<string | undefined>(text.length);
  let any = false;
  const ordered = Object.entries(secrets).sort((a, b) => b[1].length - a[1].length);
  for (const [name, value] of ordered) {
    if (value.length < MIN_SECRET) continue;
    const mark = (from: number, length: number) => {
      for (let j = from; j < from + length; j++) owner[j] ??= name;
      any = true;
    };
    if (value.length < 2 * FRAGMENT) {
      for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + 1)) mark(at, value.length);
      continue;
    }
    const grams = new Set<string>();
    for (let i = 0; i + FRAGMENT <= value.length; i++) grams.add(value.slice(i, i + FRAGMENT));
    for (let i = 0; i + FRAGMENT <= text.length; i++) if (grams.has(text.slice(i, i + FRAGMENT))) mark(i, FRAGMENT);
  }
  if (!any) return text;
  let out = "";
  for (let i = 0; i < text.length;) {
    const name = owner[i];
    if (name === undefined) {
      out += text[i++];
      continue;
    }
    while (i < text.length && owner[i] === name) i++;
    out += `[secret ${name}]`;
  }
  return out;
}

export function redactJson(value: Json, secrets: Record<string, string>): Json {
  if (typeof value === "string") return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, secrets));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactText(k, secrets), redactJson(v, secrets)]));
  return value;
}
