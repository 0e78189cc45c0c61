import { InngestTestEngine } from "@inngest/test";
import { describe, expect, it } from "vitest";
import { functions } from "@/inngest/functions";

// With Inngest configured, the provisioning runner is one durable function: finding the due
// provisionings is a step, and each visit (one node's lease held, its due steps worked) is a step of
// its own, so Inngest memoizes and retries each visit on its own.

describe("the provisioning runner on Inngest", () => {
  it("lists the due provisionings in a step of its own and visits each as its own step", async () => {
    const fn = functions.find((f) => f.id() === "provisioning-advance")!;
    expect(fn).toBeDefined();
    const t = new InngestTestEngine({
      function: fn,
      events: [{ name: "provisioning/advance.requested", data: { reason: "test" } }],
      steps: [
        { id: "due-provisionings", handler: () => ["w1", "w2", "w3"] },
        { id: "visit-w1", handler: () => "succeeded" },
        { id: "visit-w2", handler: () => "waiting" },
        { id: "visit-w3", handler: () => "busy" },
      ],
    });
    const { result, ctx } = await t.execute();
    expect(result).toEqual({ due: 3, waiting: 1, succeeded: 1, failed: 0, busy: 1, lost: 0 });
    expect(ctx.step.run).toHaveBeenCalledWith("due-provisionings", expect.any(Function));
    for (const id of ["w1", "w2", "w3"]) expect(ctx.step.run).toHaveBeenCalledWith(`visit-${id}`, expect.any(Function));
  });
});
