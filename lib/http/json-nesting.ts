// How deeply JSON may nest wherever it enters: request bodies (the route wrapper's body reader),
// server actions' values, pipeline specs typed in the editor, and the answers of tool calls. Every
// walk over a value afterwards (the NUL check, redaction, zod, serialising it for the database) may
// recurse once per level, so 20,000 levels in 40 KB would overflow the stack and answer 500; real
// documents nest a handful of levels (an inference request's messages: 4). Both checks are
// iterative and stop at the first level past the bound. Pure.

export const MAX_JSON_NESTING = 64;

export const NESTING_MESSAGE = `Nested more than ${MAX_JSON_NESTING} levels deep`;

/** Whether JSON text opens more than `max` arrays and objects inside one another (brackets inside strings do not count). */
export function jsonTextNestsDeeper(text: string, max = MAX_JSON_NESTING): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

/** Whether a value holds arrays or objects more than `max` levels inside one another (a cycle counts as too deep). */
export function valueNestsDeeper(value: unknown, max = MAX_JSON_NESTING): boolean {
  if (value === null || typeof value !== "object") return false;
  const stack: Array<{ v: object; depth: number }> = [{ v: value, depth: 1 }];
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) if (child !== null && typeof child === "object") stack.push({ v: child as object, depth: depth + 1 });
  }
  return false;
}
