// `npm run bench:landing-js`: the JavaScript a visitor's browser downloads for the landing page,
// read from the production build: the build is served (pages are rendered per request, each with
// its Content-Security-Policy nonce, so there is no prerendered HTML to read), and the chunks each
// page references are weighed from .next. No database: the landing page renders without its price
// list, which is markup, not script. Prints one
// JSON object and compares it with the lightest public page of the same build (the docs hub, which
// has no forms) and with a budget. A size check, not a timed test.
//   landing_js_bytes / landing_js_gzip_bytes     every <script src> of the landing page
//   baseline_js_gzip_bytes                        the same for /docs, in the same build
//   landing_extra_gzip_bytes                      what the landing page adds (demo modal, forms, tracker)
//   budget_gzip_bytes / within_budget             the budget we hold the landing page to (within: 1, over: 0)
// It serves a build and times nothing, so BENCH_SMOKE=1 (npm test) runs it as it is.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { freePort } from "../scripts/lib/embedded-db";
import { buildIsFresh, nextBuild, startNext } from "../scripts/lib/next-server";
import { flag, printFigures } from "./lib/report";

const BUDGET_GZIP_BYTES = 250 * 1024;

function scriptsOf(html: string): string[] {
  return [...new Set([...html.matchAll(/<script\b[^>]*\ssrc="(\/_next\/static\/[^"]+\.js)"/g)].map((m) => m[1]!))];
}

async function pageHtml(base: string, page: string): Promise<string> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const res = await fetch(base + page);
      if (res.ok) return await res.text();
      if (Date.now() > deadline) throw new Error(`${page}: HTTP ${res.status}`);
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
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

const env = {
  ...process.env,
  NODE_ENV: "production",
  // nothing listens there: the pages weighed read no data (the landing page's price list is caught)
  DATABASE_URL: "postgres://gpuforge@127.0.0.1:9/none",
  NEXTAUTH_SECRET: randomBytes(32).toString("hex"),
  NODE_ADDRESS_NETWORKS: "10.0.0.0/8",
  BACKGROUND_DRIVER: "off",
} as NodeJS.ProcessEnv;
if (!buildIsFresh()) nextBuild(env);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server = startNext({ port, env: { ...env, NEXTAUTH_URL: base }, quiet: true });
let landing: ReturnType<typeof weigh>;
let docs: ReturnType<typeof weigh>;
try {
  landing = weigh(scriptsOf(await pageHtml(base, "/")));
  docs = weigh(scriptsOf(await pageHtml(base, "/docs")));
} finally {
  await server.stop();
}
printFigures({
  landing_js_files: landing.files,
  landing_js_bytes: landing.raw,
  landing_js_gzip_bytes: landing.gzip,
  baseline_js_gzip_bytes: docs.gzip,
  landing_extra_gzip_bytes: landing.gzip - docs.gzip,
  budget_gzip_bytes: BUDGET_GZIP_BYTES,
  within_budget: flag(landing.gzip <= BUDGET_GZIP_BYTES),
});
