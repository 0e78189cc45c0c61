import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectNotFound, launchBrowser, openPage, shot } from "../support/browser";
import { makeKey, makeTenant, makeUser } from "../support/fixtures";
import { startWalkFleet, type WalkFleet } from "../support/walk-fleet";
import { api } from "../support/http";

// A tenant builds an agentic loop in the browser: the plan → act → check template against its own
// endpoint, edited (an error names the step and field as it is typed), started, and followed on
// the pipeline page as the simulated fleet plays every part over the public API: the model that
// plans and grades (its replicas' serving address), the GPU job that acts and posts its outputs
// with its own placement token. The loop iterates until the grader passes; the log says so.

let browser: Browser;
let fleet: WalkFleet;
let tenantUser: Awaited<ReturnType<typeof makeUser>>;
let otherUser: Awaited<ReturnType<typeof makeUser>>;
let tenantKey: string;
let otherKey: string;
const GPU = "MI300X"; // a GPU type no other walk uses

beforeAll(async () => {
  fleet = await startWalkFleet({ gpuType: GPU, nodes: 2, sim: { outputEveryS: 1 } });
  const tenant = await makeTenant(16);
  tenantUser = await makeUser("tenant_admin", tenant.id);
  const otherTenant = await makeTenant(4);
  otherUser = await makeUser("tenant_admin", otherTenant.id);
  otherKey = (await makeKey({ scope: "tenant", tenant_id: otherTenant.id })).key;
  tenantKey = (await makeKey({ scope: "tenant", tenant_id: tenant.id })).key;
  const ep = await api("POST", "/api/endpoints", {
    key: tenantKey,
    body: {
      name: "planner",
      model: "meta-llama/Llama-3.1-8B-Instruct",
      gpu_type: GPU,
      gpus_per_replica: 1,
      replicas: 1,
      autoscale_metric: "none",
    },
  });
  expect(ep.status).toBe(201);
  for (let i = 0; i < 150; i++) {
    if ((await api("GET", `/api/endpoints/${ep.body.endpoint.id}`, { key: tenantKey })).body.endpoint.status === "ready") break;
    await new Promise((r) => setTimeout(r, 200));
  }
  browser = await launchBrowser();
});

afterAll(async () => {
  await fleet?.stop();
  await browser?.close();
});

describe("agentic pipelines in the browser", () => {
  it("builds a loop pipeline from a template, watches it iterate to completion, and reads its log", { timeout: 240_000 }, async () => {
    const page = await openPage(browser, "/dashboard/pipelines/new", tenantUser, { width: 1440, height: 1000 });
    await page.getByRole("heading", { name: "New pipeline" }).waitFor();
    await page.getByLabel("GPU type").selectOption(GPU);
    await page.getByLabel("Endpoint").selectOption("planner");
    await page.getByTestId("template-plan-act-check").click();
    const spec = page.locator("#pipeline-spec");
    await page.getByTestId("spec-valid").waitFor();
    expect(await page.getByTestId("dag-preview").locator("[data-testid^=step-]").count()).toBe(3);
    await page.getByTestId("dag-preview").getByTestId("loop-check").waitFor();

    // as it is typed: a reference to a field the model's answer cannot have is named, step and field
    const template = await spec.inputValue();
    await spec.fill(template.replace("${steps.plan.outputs.body.choices[0].message.content}", "${steps.plan.outputs.answer}"));
    const issues = page.getByTestId("spec-issues");
    await issues.getByText("steps[1] (act) · env.PLAN").waitFor();
    await issues.getByText(/a tool call's output has status, headers and body; not “answer”/).waitFor();
    await shot(page, "pipeline-editor-error");
    // fixed, with a short act step so the walk watches several iterations
    await spec.fill(template.replace("name: plan-act-check", "name: walk-loop").replace(/duration_s: 60/, "duration_s: 2"));
    await page.getByTestId("spec-valid").waitFor();
    await shot(page, "pipeline-editor");
    await page.getByRole("button", { name: "Start pipeline" }).click();
    await page.waitForURL(/\/dashboard\/pipelines\/[0-9a-f-]{36}$/);
    const id = page.url().split("/").pop()!;
    await page.getByRole("heading", { name: "walk-loop" }).waitFor();

    // it iterates: the grader never passes the first iteration, and always by the fourth
    await page
      .getByTestId("workflow-log")
      .getByText(/iteration 1 of at most 4: .* is false; starting iteration 2/)
      .waitFor({ timeout: 90_000 });
    await shot(page, "pipeline-running");
    await page.getByTestId("pipeline-status").getByText("completed").waitFor({ timeout: 150_000 });
    const log = page.getByTestId("workflow-log");
    await log.getByText(/loop done: condition met after [2-4] iterations/).waitFor();
    await log
      .getByText(/inference call, attempt 1: HTTP 200 in \d+ ms/)
      .first()
      .waitFor();
    await log
      .getByText(/output of \d+ B from attempt 1/)
      .first()
      .waitFor();
    expect(await page.locator("svg [data-testid=step-check]").getAttribute("data-status")).toBe("completed");
    await page.getByTestId("step-row-check").getByText("Output (latest iteration)").click();
    await page
      .getByTestId("step-row-check")
      .getByText(/"content": "PASS"/)
      .waitFor();
    await shot(page, "pipeline-completed");
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, "pipeline-completed-mobile");

    // the API tells the same story
    const got = await api("GET", `/api/pipelines/${id}`, { key: tenantKey });
    expect(got.body.pipeline).toMatchObject({
      status: "completed",
      steps: [
        { name: "plan", status: "completed" },
        { name: "act", status: "completed" },
        { name: "check", status: "completed" },
      ],
    });
    const iterations = got.body.pipeline.steps[2].iteration as number;
    expect(iterations).toBeGreaterThanOrEqual(2);
    expect(iterations).toBeLessThanOrEqual(4);
    const entries = (await api("GET", `/api/pipelines/${id}/log`, { key: tenantKey })).body.data as Array<{
      kind: string;
      step: string | null;
      details: Record<string, unknown> | null;
    }>;
    expect(entries.filter((e) => e.kind === "iteration")).toHaveLength(iterations);
    expect(
      entries
        .filter((e) => e.kind === "tool_call" && e.step === "check")
        .every((e) => e.details?.status === 200 && typeof e.details?.duration_ms === "number"),
    ).toBe(true);
    // the act job's outputs came from its own container (its placement token), one per iteration
    const outputs = (await api("GET", `/api/pipelines/${id}/outputs`, { key: tenantKey })).body.data as Array<{
      step: string;
      source: string;
    }>;
    expect(outputs.filter((o) => o.step === "act" && o.source === "job")).toHaveLength(iterations);
    const act = await api("GET", `/api/jobs/${got.body.pipeline.steps[1].job_id}`, { key: tenantKey });
    expect(act.body.job.status).toBe("completed");
    await page.context().close();

    // another tenant: 404, in the browser and the API
    const other = await openPage(browser, `/dashboard/pipelines/${id}`, otherUser);
    await expectNotFound(other, "pipeline");
    expect((await api("GET", `/api/pipelines/${id}`, { key: otherKey })).status).toBe(404);
    await other.context().close();

    const list = await openPage(browser, "/dashboard/pipelines", tenantUser, { width: 390, height: 844 });
    await list.getByRole("link", { name: "walk-loop" }).waitFor();
    await shot(list, "pipelines-list-mobile");
    await list.context().close();
  });
});
