import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Serious and critical WCAG 2.1 A/AA violations on the page as it stands (axe-core), one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.waitForLoadState("networkidle");
  // streamed metadata: the <title> can land after the body (and a live refresh re-renders it)
  await page.waitForFunction(() => document.title.length > 0);
  await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const r = await (
      window as unknown as {
        axe: {
          run: (
            ctx: unknown,
            o: unknown,
          ) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>;
        };
      }
    ).axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.nodes
            .slice(0, 3)
            .map((n) => n.target.join(" "))
            .join(", ")}`,
      );
  });
}
