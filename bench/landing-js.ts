// `npm run bench:landing-js`: the JavaScript a visitor's browser downloads for the landing page,
// read from the production build (the prerendered HTML and the chunks it references). Prints one
// JSON object and compares it with the lightest public page of the same build (the docs hub, which
// has no forms) and with a budget. A size check, not a timed test.
//   landing_js_bytes / landing_js_gzip_bytes     every <script src> of the landing page
//   baseline_js_gzip_bytes                        the same for /docs, in the same build
//   landing_extra_gzip_bytes                      what the landing page adds (demo modal, forms, tracker)
//   budget_gzip_bytes / within_budget             the budget we hold the landing page to (within: 1, over: 0)
// It reads a build and times nothing, so BENCH_SMOKE=1 (npm test) runs it as it is.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { buildIsFresh, nextBuild } from "../scripts/lib/next-server";
import { flag, printFigures } from "./lib/report";

const BUDGET_GZIP_BYTES = 250 * 1024;

function scriptsOf(htmlFile: string): string[] {
  const html = readFileSync(htmlFile, "utf8");
  return [...new Set([...html.matchAll(/<script src="(\/_next\/static\/[^"]+\.js)"/g)].map((m) => m[1]!))];
}

function weigh(scripts: string[]) {
  let raw = 0;
  let gzip = 0;
  for (const s of scripts) {
    const file = path.join(".next", s.replace(/^\/_next\//, ""));
    const bytes = readFileSync(file);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip, files: scripts.length };
}

if (!buildIsFresh()) nextBuild({ ...process.env, NODE_ENV: "production" } as NodeJS.ProcessEnv);
const landingHtml = path.join(".next", "server", "app", "index.html");
const docsHtml = path.join(".next", "server", "app", "docs.html");
for (const f of [landingHtml, docsHtml]) if (!existsSync(f)) throw new Error(`${f} is missing: the page is not prerendered any more`);
const landing = weigh(scriptsOf(landingHtml));
const docs = weigh(scriptsOf(docsHtml));
printFigures({
  landing_js_files: landing.files,
  landing_js_bytes: landing.raw,
  landing_js_gzip_bytes: landing.gzip,
  baseline_js_gzip_bytes: docs.gzip,
  landing_extra_gzip_bytes: landing.gzip - docs.gzip,
  budget_gzip_bytes: BUDGET_GZIP_BYTES,
  within_budget: flag(landing.gzip <= BUDGET_GZIP_BYTES),
});
