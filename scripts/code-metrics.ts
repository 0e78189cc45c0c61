// Figures about the code itself, to compare a refactoring's before and after (issue 16's report):
// raw SQL call sites and SQL lines per folder, type assertions (`as`), lines over 140 characters,
// the largest files, and status strings cast back to unions. Reads files as text; prints JSON.
//   npx tsx scripts/code-metrics.ts [--top 10]
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { top: { type: "string", default: "10" } } });
const top = Number(values.top);

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { encoding: "utf8" })
  .split("\n")
  .filter((f) => /\.(ts|tsx)$/.test(f) && !f.startsWith("lib/generated/") && !f.endsWith(".d.ts"));

const RAW_SQL_CALL = /\$queryRaw(?:Unsafe)?\b|\$executeRaw(?:Unsafe)?\b|\.query(?:<[^>]*>)?\(/g;
const SQL_LINE =
  /^\s*[`"']?\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|FROM|WHERE|JOIN|LEFT JOIN|RETURNING|ON CONFLICT|GROUP BY|ORDER BY|SET|VALUES|AND|OR|UNION|HAVING|LIMIT)\b/;
// `x as T`, not `as const` and not `import { a as b }` / `export { a as b }`
const CAST = /\bas\s+(?!const\b)(?=[A-Za-z_{[("'`])/g;
const STATUS_CAST = /\bstatus\s+as\s+[A-Z]\w*/g;

type Tally = {
  files: number;
  lines: number;
  raw_sql_calls: number;
  sql_lines: number;
  casts: number;
  status_casts: number;
  long_lines: number;
};
const empty = (): Tally => ({ files: 0, lines: 0, raw_sql_calls: 0, sql_lines: 0, casts: 0, status_casts: 0, long_lines: 0 });
const byFolder = new Map<string, Tally>();
const total = empty();
const sizes: Array<{ file: string; lines: number }> = [];

for (const file of files) {
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  const folder = file
    .split("/")
    .slice(0, file.startsWith("lib/") || file.startsWith("app/") ? 2 : 1)
    .join("/");
  const t = byFolder.get(folder) ?? empty();
  const code = lines.filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l));
  const add: Tally = {
    files: 1,
    lines: lines.length,
    raw_sql_calls: (text.match(RAW_SQL_CALL) ?? []).length,
    sql_lines: lines.filter((l) => SQL_LINE.test(l)).length,
    casts: code.filter((l) => !/^\s*(import|export)\s*(type\s*)?\{/.test(l)).reduce((n, l) => n + (l.match(CAST) ?? []).length, 0),
    status_casts: (text.match(STATUS_CAST) ?? []).length,
    long_lines: lines.filter((l) => l.length > 140).length,
  };
  for (const k of Object.keys(add) as Array<keyof Tally>) {
    t[k] += add[k];
    total[k] += add[k];
  }
  byFolder.set(folder, t);
  sizes.push({ file, lines: lines.length });
}

const folders = Object.fromEntries(
  [...byFolder].sort(([a], [b]) => a.localeCompare(b)).filter(([, t]) => t.raw_sql_calls || t.casts || t.long_lines),
);
console.log(JSON.stringify({ total, largest_files: sizes.sort((a, b) => b.lines - a.lines).slice(0, top), by_folder: folders }, null, 2));
