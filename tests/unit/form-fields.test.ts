import { describe, expect, it } from "vitest";
import { formFields } from "@/components/forms/form-fields";

// The one place a form ties a field's name to its schema path, its error, its echoed value and the
// key that remounts it: what each form used to look up by hand.

describe("form fields", () => {
  it("find a field's error at its schema path, under the form's object, or by its own name", () => {
    const f = formFields(
      { fieldErrors: { "deposit.amount_cents": "Too small", "deposit.description": "Too long", period_start: "Not a time" }, at: 1 },
      { under: "deposit", paths: { amount: "deposit.amount_cents" } },
    );
    expect(f("amount").error).toBe("Too small");
    expect(f("description").error).toBe("Too long");
    // a use case's refusal may name the form's field rather than the schema's path
    expect(f("period_start").error).toBe("Not a time");
    expect(f("other").error).toBeUndefined();
  });

  it("hide an edited field's error, renamed paths and list items included", () => {
    const state = { fieldErrors: { "deposit.amount_cents": "Too small", "ports.1": "Taken", "deposit.description": "Too long" }, at: 1 };
    const options = { under: "deposit", paths: { amount: "deposit.amount_cents", ports: "ports" } };
    expect(formFields(state, options)("amount").error).toBe("Too small");
    const edited = formFields({ ...state, edited: ["amount", "ports"] }, options);
    expect([edited("amount").error, edited("ports").error, edited("description").error]).toEqual([undefined, undefined, "Too long"]);
  });

  it("give a list's field the first error of its items", () => {
    const f = formFields({ fieldErrors: { "ports.1": "Not a port" } });
    expect(f("ports").error).toBe("Not a port");
    expect(f("port").error).toBeUndefined();
  });

  it("start a field with what was sent after a refusal, else with its own value", () => {
    const refused = formFields({ ok: false, values: { name: "typed" }, at: 2 });
    expect(refused("name", "stored").defaultValue).toBe("typed");
    expect(refused("quota", 64).defaultValue).toBe("64");
    expect(refused("email", null).defaultValue).toBeUndefined();
    const saved = formFields({ ok: true, at: 3 });
    expect(saved("name", "stored").defaultValue).toBe("stored");
    expect(saved.value("replicas", 2)).toBe("2");
  });

  it("remount with every answer, and with the choice the form depends on", () => {
    expect(formFields({ at: 5 })("name").at).not.toBe(formFields({ at: 6 })("name").at);
    expect(formFields({ at: 5 }, { remountWith: "gpu_temp" }).key).not.toBe(formFields({ at: 5 }, { remountWith: "xid" }).key);
  });

  it("leave an input held in state, or a secret, unfilled and unkeyed", () => {
    const f = formFields({ values: { value: "s3cret" }, fieldErrors: { value: "Too long" }, at: 7 }, { idPrefix: "secret" });
    expect(f.bare("value")).toEqual({ name: "value", idPrefix: "secret", error: "Too long" });
  });

  it("check a box after a refusal only if it was sent (an unchecked box is not)", () => {
    expect(formFields({ values: { name: "x" } }).checked("enabled", true)).toBe(false);
    expect(formFields({ values: { enabled: "on" } }).checked("enabled", false)).toBe(true);
    expect(formFields({ ok: true }).checked("enabled", true)).toBe(true);
  });
});
