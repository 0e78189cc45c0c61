import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { advance, type StepState } from "@/lib/pipelines/dag";
import {
  evaluate,
  evaluateCondition,
  ExpressionError,
  parseExpression,
  parseTemplate,
  renderHeader,
  renderJson,
  renderTemplate,
  SecretReference,
  type Json,
  type Scope,
} from "@/lib/pipelines/expressions";
import { redactJson, redactText } from "@/lib/pipelines/tool-calls/redact";
import { outboundAddressProblem } from "@/lib/http/public-address";
import { parseCidrList } from "@/lib/http/client-address";
import { hostAllowed, parseAllowList } from "@/lib/pipelines/allow-list";
import { loopDecision } from "@/lib/pipelines/loop";
import { validateSpec } from "@/lib/pipelines/spec";

const scope = (outputs: Record<string, Json | undefined>, iteration = 0): Scope => ({
  outputs,
  iteration,
  pipeline: { id: "p1", name: "demo" },
});

describe("expressions", () => {
  const s = scope({ plan: { files: ["a.py", "b.py"], n: 2, note: "ok" }, check: undefined });

  it("renders references in text, JSON-encoding what is not a string, and keeps $${ literal", () => {
    expect(renderTemplate("python act.py ${steps.plan.outputs.files[1]} --n ${steps.plan.outputs.n}", s)).toBe("python act.py b.py --n 2");
    expect(renderTemplate("files=${steps.plan.outputs.files}", s)).toBe('files=["a.py","b.py"]');
    expect(renderTemplate("echo $${HOME} ${loop.iteration} ${pipeline.name}", scope({}, 3))).toBe("echo ${HOME} 3 demo");
  });

  it("keeps a value's JSON type when a body string is exactly one reference", () => {
    expect(renderJson({ files: "${steps.plan.outputs.files}", text: "n=${steps.plan.outputs.n}" }, s)).toEqual({
      files: ["a.py", "b.py"],
      text: "n=2",
    });
  });

  it("says which reference failed and why: no step, no output yet, no field, not a list", () => {
    const why = (src: string) => {
      try {
        renderTemplate(src, s);
      } catch (e) {
        return (e as ExpressionError).message;
      }
      return "resolved";
    };
    expect(why("${steps.ghost.outputs.x}")).toMatch(/no step named ghost/);
    expect(why("${steps.check.outputs.x}")).toMatch(/check has no output yet/);
    expect(why("${steps.plan.outputs.missing}")).toMatch(/has no field “missing” \(it has: files, n, note\)/);
    expect(why("${steps.plan.outputs.n[0]}")).toMatch(/is not a list/);
    expect(why("${steps.plan.outputs.files[5]}")).toMatch(/has 2 item\(s\), no \[5\]/);
  });

  it("falls back with ?? only when a value is missing or null, not on a type error", () => {
    expect(evaluate(parseExpression('steps.check.outputs.feedback ?? "none"'), s)).toBe("none");
    expect(evaluate(parseExpression('steps.plan.outputs.note ?? "none"'), s)).toBe("ok");
    expect(() => evaluate(parseExpression("steps.plan.outputs.note < 3 ?? true"), s)).toThrow(/compares two numbers or two strings/);
  });

  it("evaluates conditions with comparisons and logic, wrapped or bare, and insists on true or false", () => {
    expect(evaluateCondition('steps.plan.outputs.n >= 2 && steps.plan.outputs.note == "ok"', s)).toBe(true);
    expect(evaluateCondition('${steps.plan.outputs.n} == 3 || !(steps.plan.outputs.note == "no")', s)).toBe(true);
    expect(() => evaluateCondition("steps.plan.outputs.n", s)).toThrow(/not true or false/);
  });

  it("refuses bad syntax with a position, never throwing anything but ExpressionError", () => {
    expect(() => parseExpression("steps.plan.outputs.n ==")).toThrow(/ends too early/);
    expect(() => parseTemplate("echo ${steps.plan")).toThrow(/never closed/);
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (src) => {
        try {
          evaluate(parseExpression(src), s);
        } catch (e) {
          expect(e).toBeInstanceOf(ExpressionError);
        }
      }),
    );
  });
});

describe("secrets in expressions (issue 27): a name passed on whole, never a value", () => {
  const withSecrets: Scope = { ...scope({ plan: { n: 1 } }), secretNames: new Set(["TOKEN"]) };
  const misuse = (src: string) => {
    try {
      renderHeader(src, withSecrets);
      return "rendered";
    } catch (e) {
      return (e as Error).message;
    }
  };

  it("a header keeps ${secrets.NAME} as a reference the worker fills in, and renders everything else", () => {
    expect(renderHeader("Bearer ${secrets.TOKEN} for ${pipeline.name}", withSecrets)).toEqual([
      "Bearer ",
      new SecretReference("TOKEN"),
      " for ",
      "demo",
    ]);
  });

  it("no operator may touch a secret: not comparing, testing, negating, defaulting nor combining it", () => {
    for (const src of [
      '${secrets.TOKEN == "sk-live-guess"}',
      '${secrets.TOKEN < "m"}',
      "${!secrets.TOKEN}",
      "${secrets.TOKEN && true}",
      '${secrets.TOKEN ?? "fallback"}',
      '${secrets.TOKEN != ""}',
    ]) {
      const m = misuse(src);
      expect(m, src).toMatch(/^secrets\.TOKEN can only be inserted whole/);
    }
    // nowhere but a header does one render at all
    expect(() => renderTemplate("echo ${secrets.TOKEN}", withSecrets)).toThrow(/can only be inserted whole/);
    expect(() => renderJson({ q: "${secrets.TOKEN}" }, withSecrets)).toThrow(/can only be inserted whole/);
    expect(() => evaluateCondition("secrets.TOKEN == 1", withSecrets)).toThrow(/can only be inserted whole/);
    // a secret that does not exist is "missing", and ?? may fall back from that alone
    expect(renderHeader('${secrets.OTHER ?? "none"}', withSecrets)).toEqual(["none"]);
  });

  it("whatever the expression, no error ever carries a secret's value, because none is ever in the scope (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom("==", "!=", "<", ">=", "&&", "||", "??"), fc.string({ maxLength: 12 }), (op, other) => {
        const src = `\${secrets.TOKEN ${op} ${JSON.stringify(other)}}`;
        const m = misuse(src);
        expect(m).not.toBe("rendered");
        expect(m).not.toMatch(/sk-/);
      }),
    );
  });
});

describe("what a tool call stores has no secret in it, whole or in part", () => {
  const secrets = { OPENAI_KEY: "sk-proj-7fJ2kLmN9pQrStUvWxYz0123456789", SHORT: "ab12" };
  it("masks the whole value and any run of six or more of its characters, wherever they appear", () => {
    expect(redactText("key sk-proj-7fJ2kLmN9pQrStUvWxYz0123456789 ok", secrets)).toBe("key [secret OPENAI_KEY] ok");
    // a server quoting a prefix, a suffix or a middle of the key gives none of it away
    expect(redactText("Incorrect API key provided: sk-proj-7fJ2****6789", secrets)).toBe(
      "Incorrect API key provided: [secret OPENAI_KEY]****6789",
    );
    expect(redactText("ends in WxYz0123456789.", secrets)).toBe("ends in [secret OPENAI_KEY].");
    expect(redactText("short ab12 and abc", secrets)).toBe("short [secret SHORT] and abc");
    expect(redactJson({ echoed: { auth: "Bearer sk-proj-7fJ2kLmN9p" } }, secrets)).toEqual({
      echoed: { auth: "Bearer [secret OPENAI_KEY]" },
    });
    expect(redactText("nothing here", secrets)).toBe("nothing here");
  });
});

describe("where tool calls may go", () => {
  it("public addresses only, unless the operator allows a network; embedded IPv4 is judged too", () => {
    for (const a of [
      "127.0.0.1",
      "10.1.2.3",
      "172.20.0.1",
      "192.168.1.1",
      "100.64.0.1",
      "169.254.169.254",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "fe80::1",
      "fd00:ec2::254",
      "::ffff:169.254.169.254",
      "64:ff9b::a9fe:a9fe",
      "2002:a9fe:a9fe::1",
      "198.18.0.1",
      "2001:db8::1",
    ])
      expect(outboundAddressProblem(a), a).not.toBeNull();
    for (const a of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "151.101.1.69"]) expect(outboundAddressProblem(a), a).toBeNull();
    const internal = parseCidrList("10.40.0.0/16")!;
    expect(outboundAddressProblem("10.40.3.4", internal)).toBeNull();
    expect(outboundAddressProblem("10.41.3.4", internal)).toMatch(/private/);
    expect(outboundAddressProblem("169.254.169.254", internal)).toMatch(/link-local/);
  });
});

describe("loop decisions (property-tested)", () => {
  const facts = fc.record({
    max: fc.integer({ min: 1, max: 100 }),
    timeoutS: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: null }),
    conditional: fc.boolean(),
  });

  it("never runs more than max iterations, whatever the conditions and clock say", () => {
    fc.assert(
      fc.property(
        facts,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 120 }),
        fc.array(fc.nat({ max: 20_000_000 }), { minLength: 1, maxLength: 120 }),
        (f, conditions, clock) => {
          let runs = 0;
          for (;;) {
            runs++;
            const d = loopDecision({
              runs,
              max: f.max,
              conditional: f.conditional,
              condition: conditions[(runs - 1) % conditions.length],
              elapsedMs: clock[(runs - 1) % clock.length]!,
              timeoutS: f.timeoutS,
            });
            if (d.kind !== "again") break;
          }
          expect(runs).toBeLessThanOrEqual(f.max);
        },
      ),
    );
  });

  it("a false condition always advances to another iteration while iterations and time remain; a true one always stops", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 100 }),
        fc.integer({ min: 1, max: 99 }),
        fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: null }),
        fc.nat(),
        (max, r, timeoutS, elapsed) => {
          const runs = Math.min(r, max - 1);
          const elapsedMs = timeoutS === null ? elapsed : elapsed % (timeoutS * 1000);
          expect(loopDecision({ runs, max, conditional: true, condition: false, elapsedMs, timeoutS }).kind).toBe("again");
          expect(loopDecision({ runs, max, conditional: true, condition: true, elapsedMs, timeoutS }).kind).toBe("done");
        },
      ),
    );
  });

  it("a loop without a condition runs exactly max times; one whose condition never holds gives up at max or at its time limit", () => {
    expect(loopDecision({ runs: 3, max: 3, conditional: false, elapsedMs: 0, timeoutS: null })).toEqual({
      kind: "done",
      reason: "all 3 runs completed",
    });
    expect(loopDecision({ runs: 3, max: 3, conditional: true, condition: false, elapsedMs: 0, timeoutS: 60 }).kind).toBe("exhausted");
    expect(loopDecision({ runs: 1, max: 3, conditional: true, condition: false, elapsedMs: 60_000, timeoutS: 60 })).toMatchObject({
      kind: "exhausted",
      reason: expect.stringMatching(/time limit/),
    });
  });

  it("the pipeline's loop over plan → act → check restarts its body until the condition holds, never past max", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (max, verdicts) => {
        const loop = { from: "plan", until: "steps.check.outputs.passed == true", max, timeoutS: 3600, onExhausted: "fail" as const };
        let steps: StepState[] = [
          { name: "plan", dependsOn: [], status: "waiting", iteration: 0, outcome: null },
          { name: "act", dependsOn: ["plan"], status: "waiting", iteration: 0, outcome: null },
          { name: "check", dependsOn: ["act"], status: "waiting", iteration: 0, outcome: null, loop, loopStartedAt: new Date(0) },
          { name: "report", dependsOn: ["check"], status: "waiting", iteration: 0, outcome: null },
        ];
        let iterations = 0;
        let pipeline = "running";
        for (let tick = 0; tick < 100 && pipeline === "running"; tick++) {
          const passed = verdicts[Math.min(iterations, 7)]!;
          const d = advance(steps, { now: new Date(1000), scope: scope({ plan: {}, act: {}, check: { passed }, report: {} }) });
          pipeline = d.pipeline;
          const byName = new Map(d.updates.map((u) => [u.name, u]));
          if (d.log.some((l) => l.kind === "iteration")) iterations++;
          // every step started completes before the next decision
          steps = steps.map((st) => {
            const u = byName.get(st.name);
            const next = u ? { ...st, status: u.status, iteration: u.iteration } : st;
            return { ...next, outcome: next.status === "running" ? "completed" : null };
          });
        }
        const firstPass = verdicts.slice(0, max).indexOf(true);
        expect(iterations).toBeLessThanOrEqual(max);
        expect(pipeline).toBe(firstPass >= 0 ? "completed" : "failed");
        if (firstPass >= 0) expect(iterations).toBe(firstPass + 1);
      }),
    );
  });
});

describe("spec validation", () => {
  const job = (name: string, more: Record<string, unknown> = {}) => ({ name, gpu_count: 1, gpu_type: "H100", ...more });

  it("names the step and field of an unknown step, a step that does not run before, and an undeclared field", () => {
    const issues = validateSpec({
      steps: [
        job("plan", { outputs: ["files"] }),
        job("act", { depends_on: ["plan"], command: "run ${steps.plan.outputs.file}", env: { X: "${steps.ghost.outputs.a}" } }),
        job("side", { command: "echo ${steps.act.outputs.x}" }),
      ],
    } as never);
    expect(issues).toEqual([
      { path: "steps[1].command", message: expect.stringMatching(/^Step “act”: .*declares the outputs files; not “file”/) },
      { path: "steps[1].env.X", message: expect.stringMatching(/no step named “ghost”/) },
      { path: "steps[2].command", message: expect.stringMatching(/“act” does not run before “side”; add it to depends_on/) },
    ]);
  });

  it("checks loops: their start, overlaps, exits from the middle, and first-iteration reads without a default", () => {
    const loop = { from: "plan", until: "steps.check.outputs.body.ok == true", max: 3 };
    const good = validateSpec(
      {
        steps: [
          { name: "plan", kind: "inference", request: { endpoint: "chat", body: { prompt: '${steps.check.outputs.body.hint ?? ""}' } } },
          job("act", { depends_on: ["plan"], env: { PLAN: "${steps.plan.outputs.body}" } }),
          { name: "check", kind: "http", depends_on: ["act"], request: { url: "https://eval.example.com/x" }, repeat: loop },
        ],
      } as never,
      { allowedHosts: ["eval.example.com"], endpoints: new Set(["chat"]) },
    );
    expect(good, JSON.stringify(good)).toEqual([]);
    const bad = validateSpec(
      {
        steps: [
          { name: "plan", kind: "inference", request: { endpoint: "nope", body: { prompt: "${steps.check.outputs.body.hint}" } } },
          job("act", { depends_on: ["plan"] }),
          { name: "check", kind: "http", depends_on: ["act"], request: { url: "https://evil.example.net/x" }, repeat: loop },
          job("after", { depends_on: ["act"] }),
        ],
      } as never,
      { allowedHosts: ["eval.example.com"], endpoints: new Set(["chat"]) },
    );
    expect(bad.map((i) => i.path).sort()).toEqual(
      ["steps[0].request.body.prompt", "steps[0].request.endpoint", "steps[2].request.url", "steps[3].depends_on[0]"].sort(),
    );
    expect(bad.find((i) => i.path === "steps[0].request.body.prompt")!.message).toMatch(/first iteration .* give a default/);
  });

  it("keeps secrets to http headers and GPU fields to job steps", () => {
    const issues = validateSpec(
      {
        steps: [
          job("a", { command: "echo ${secrets.TOKEN}" }),
          {
            name: "b",
            kind: "http",
            gpu_count: 1,
            request: { url: "https://x.test/", headers: { Authorization: "Bearer ${secrets.TOKEN}", X: "${secrets.MISSING}" } },
          },
        ],
      } as never,
      { secrets: new Set(["TOKEN"]) },
    );
    expect(issues.map((i) => i.path)).toEqual(["steps[1].gpu_count", "steps[0].command", "steps[1].request.headers.X"]);
  });

  it("takes a secret only whole in a header, and only from those its admins allowed", () => {
    const http = (headers: Record<string, string>) => ({ name: "call", kind: "http", request: { url: "https://x.test/", headers } });
    const ctx = { secrets: new Set(["ADMIN_ONLY", "SHARED"]), usableSecrets: new Set(["SHARED"]) };
    const whole = validateSpec({ steps: [http({ A: "Bearer ${secrets.SHARED}", B: "${secrets.SHARED}-${pipeline.name}" })] } as never, ctx);
    expect(whole).toEqual([]);
    const bad = validateSpec(
      {
        steps: [
          http({
            A: '${secrets.SHARED == "x"}',
            B: "${!secrets.SHARED}",
            C: '${secrets.SHARED ?? "none"}',
            D: "Bearer ${secrets.ADMIN_ONLY}",
          }),
        ],
      } as never,
      ctx,
    );
    expect(bad.map((i) => [i.path, i.message.replace(/^Step “call”: /, "")])).toEqual([
      ["steps[0].request.headers.A", expect.stringMatching(/^secrets\.SHARED: a secret is inserted whole/)],
      ["steps[0].request.headers.B", expect.stringMatching(/^secrets\.SHARED: a secret is inserted whole/)],
      ["steps[0].request.headers.C", expect.stringMatching(/^secrets\.SHARED: a secret is inserted whole/)],
      ["steps[0].request.headers.D", expect.stringMatching(/^secrets\.ADMIN_ONLY: your role may not use this secret/)],
    ]);
  });
});

describe("the http allow-list", () => {
  it("matches hosts, ports and subdomains, and nothing when empty", () => {
    const list = parseAllowList(" api.example.com , 127.0.0.1:8080,*.tools.example ");
    expect(hostAllowed(new URL("https://api.example.com/v1"), list)).toBe(true);
    expect(hostAllowed(new URL("http://127.0.0.1:8080/"), list)).toBe(true);
    expect(hostAllowed(new URL("http://127.0.0.1:8081/"), list)).toBe(false);
    expect(hostAllowed(new URL("https://a.tools.example/"), list)).toBe(true);
    expect(hostAllowed(new URL("https://tools.example/"), list)).toBe(false);
    expect(hostAllowed(new URL("https://api.example.com.evil.test/"), list)).toBe(false);
    expect(hostAllowed(new URL("https://api.example.com/"), [])).toBe(false);
  });
});

describe("the editor's analysis", () => {
  it("parses YAML and JSON, says where the text is broken, and names step and field of every problem", async () => {
    const { analyzeSpec } = await import("@/lib/pipelines/editor");
    expect(analyzeSpec("name: x\nsteps: [\n", "yaml").issues[0]).toMatchObject({
      path: "spec",
      message: expect.stringMatching(/^Not valid YAML \(line \d+\)/),
    });
    expect(analyzeSpec("{", "json").issues[0]!.message).toMatch(/^Not valid JSON/);
    const bad = analyzeSpec("name: x\nsteps:\n  - name: plan\n    gpu_count: two\n    gpu_type: H100\n", "yaml");
    expect(bad.issues).toEqual([expect.objectContaining({ path: "steps[0].gpu_count", where: "steps[0] (plan) · gpu_count" })]);
    const loop = analyzeSpec(
      JSON.stringify({
        name: "l",
        steps: [
          { name: "a", gpu_count: 1, gpu_type: "H100" },
          { name: "b", depends_on: ["a"], gpu_count: 1, gpu_type: "H100", repeat: { from: "a", until: "steps.b.outputs.ok", max: 3 } },
        ],
      }),
      "json",
    );
    expect(loop.issues).toEqual([]);
    expect(loop.nodes).toEqual([
      { name: "a", kind: "job", dependsOn: [], depth: 0, loop: null },
      { name: "b", kind: "job", dependsOn: ["a"], depth: 1, loop: { from: "a", label: "until steps.b.outputs.ok · ≤ 3" } },
    ]);
  });

  it("refuses a spec nested past the JSON bound, bracketed or indented, instead of overflowing its parsers", async () => {
    const { analyzeSpec } = await import("@/lib/pipelines/editor");
    const message = "The spec is nested more than 64 levels deep";
    for (const [text, format] of [
      ["[".repeat(20_000) + "]".repeat(20_000), "json"],
      [`name: x\nsteps: ${"[".repeat(20_000)}${"]".repeat(20_000)}`, "yaml"],
      [`name: x\nsteps:\n${Array.from({ length: 80 }, (_, i) => `${" ".repeat(i * 2 + 2)}- `).join("\n")}1\n`, "yaml"],
    ] as const)
      expect(analyzeSpec(text, format).issues, `${format} ${text.slice(0, 30)}`).toEqual([{ path: "spec", where: "(the spec)", message }]);
  });

  it("fails a tool call whose JSON answer nests past the bound, without walking it", async () => {
    const { readResponse } = await import("@/lib/pipelines/tool-calls/call-result");
    const bomb = new Response("[".repeat(20_000) + "]".repeat(20_000), { headers: { "content-type": "application/json" } });
    expect(await readResponse(bomb, 1 << 20, Date.now(), null)).toMatchObject({
      ok: false,
      retryable: false,
      error: "the response's JSON is nested more than 64 levels deep",
    });
  });
});
