import { InngestTestEngine } from "@inngest/test";
import { describe, expect, it } from "vitest";
import { functions } from "@/inngest/functions";

// With Inngest configured, the tool-call worker is one durable function whose steps are the claim
// and each call (so Inngest memoizes and retries each on its own), not one opaque step.

describe("the tool-call worker on Inngest", () => {
  it("claims due calls in a step of its own and makes each call as its own step", async () => {
    const fn = functions.find((f) => f.id() === "pipelines-tool-calls")!;
    expect(fn).toBeDefined();
    const call = { id: "s1", call_attempt: 2, call_fence: "0123abcd-0000-4000-8000-000000000000" };
    const t = new InngestTestEngine({
      function: fn,
      events: [{ name: "pipelines/tool-call.requested", data: { reason: "test" } }],
      steps: [
        { id: "claim-due-calls", handler: () => [call] },
        { id: "call-s1-2-0123abcd", handler: () => "completed" },
      ],
    });
    const { result, ctx } = await t.execute();
    expect(result).toEqual({ claimed: 1, completed: 1, failed: 0, retried: 0, discarded: 0 });
    expect(ctx.step.run).toHaveBeenCalledWith("claim-due-calls", expect.any(Function));
    expect(ctx.step.run).toHaveBeenCalledWith("call-s1-2-0123abcd", expect.any(Function));
  });

  it("other jobs still run as one step named after the job", async () => {
    const fn = functions.find((f) => f.id() === "audit-log-retention")!;
    const t = new InngestTestEngine({
      function: fn,
      events: [{ name: "platform/audit.prune.requested", data: { requested_by: "t" } }],
      steps: [{ id: "audit-log-retention", handler: () => ({ deleted: 0 }) }],
    });
    const { result } = await t.execute();
    expect(result).toEqual({ deleted: 0 });
  });
});
