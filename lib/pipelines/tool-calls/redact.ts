import type { Json } from "../expressions";

// Secrets are never echoed: whatever a tool call stores (its output, an error, a log line) has
// every secret value of the tenant replaced by its name first, even when the server called echoes
// the request back.

export function redactText(text: string, secrets: Record<string, string>): string {
  let out = text;
  // longest first, so a secret containing another is replaced whole
  for (const [name, value] of Object.entries(secrets).sort((a, b) => b[1].length - a[1].length)) {
    if (value.length >= 4) out = out.split(value).join(`[secret ${name}]`);
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
