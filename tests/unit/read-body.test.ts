import { describe, expect, it } from "vitest";
import { jsonTextNestsDeeper, MAX_JSON_NESTING, valueNestsDeeper } from "@/lib/http/json-nesting";
import { attachBody, readJsonBody, readTextBody, readWithinLimit } from "@/lib/http/read-body";
import { refuseNul } from "@/lib/http/refuse-nul";
import { codeOf } from "../support/outcomes";

/** A POST whose body arrives in chunks, with no Content-Length (chunked transfer). */
function streamed(chunks: string[]): Request {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const x of chunks) c.enqueue(new TextEncoder().encode(x));
      c.close();
    },
  });
  return new Request("http://x/api", { method: "POST", body, duplex: "half" } as RequestInit);
}

describe("request bodies within a limit", () => {
  it("reads a streamed body under the limit, and refuses one over it without a Content-Length", async () => {
    expect(await readTextBody(streamed(['{"a":', "1}"]), 100)).toBe('{"a":1}');
    expect(await codeOf(readTextBody(streamed(["x".repeat(60), "x".repeat(60)]), 100))).toBe("payload_too_large");
  });

  it("refuses a declared Content-Length over the limit before reading anything", async () => {
    let pulled = false;
    const never = {
      async *[Symbol.asyncIterator]() {
        pulled = true;
        yield new Uint8Array(1);
      },
    };
    expect(await codeOf(readWithinLimit(never, "5000", 100))).toBe("payload_too_large");
    expect(pulled).toBe(false);
  });

  it("applies the route's own limit to a body a server already read into memory", async () => {
    const request = new Request("http://x/api", { method: "POST" });
    attachBody(request, Buffer.from(JSON.stringify({ big: "y".repeat(200) })));
    expect(await codeOf(readTextBody(request, 100))).toBe("payload_too_large");
    expect(await readJsonBody(request, 1_000)).toEqual({ big: "y".repeat(200) });
    const empty = new Request("http://x/api", { method: "POST" });
    attachBody(empty, Buffer.alloc(0));
    expect(await codeOf(readJsonBody(empty, 100))).toBe("validation_failed");
  });

  it("names the body when it is missing or not JSON", async () => {
    expect(await codeOf(readJsonBody(new Request("http://x/api", { method: "POST" }), 100))).toBe("validation_failed");
    expect(await codeOf(readJsonBody(streamed(["{oops"]), 100))).toBe("validation_failed");
  });
});

describe("JSON nesting is bounded wherever JSON enters", () => {
  const deep = (levels: number, open = "[", close = "]") => open.repeat(levels) + close.repeat(levels);

  it("refuses 20,000 levels in 40 KB with a 400 naming the body, before anything walks it", async () => {
    const bomb = deep(20_000);
    expect(bomb.length).toBe(40_000);
    const request = new Request("http://x/api", { method: "POST" });
    attachBody(request, Buffer.from(bomb));
    const refused = await readJsonBody(request, 1 << 20).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: "validation_failed",
      details: [{ path: "body", message: `Nested more than ${MAX_JSON_NESTING} levels deep` }],
    });
    // objects too, and mixed
    expect(await codeOf(readJsonBody(streamed(['{"a":'.repeat(100), "1", "}".repeat(100)]), 1 << 20))).toBe("validation_failed");
  });

  it("lets ordinary documents through at the bound, and ignores brackets inside strings", async () => {
    expect(jsonTextNestsDeeper(deep(MAX_JSON_NESTING))).toBe(false);
    expect(jsonTextNestsDeeper(deep(MAX_JSON_NESTING + 1))).toBe(true);
    const text = JSON.stringify({ prompt: "[".repeat(5_000), quote: 'he said \\"[[[[', messages: [{ role: "user", content: "{{{{" }] });
    expect(jsonTextNestsDeeper(text)).toBe(false);
    expect(await readJsonBody(streamed([text]), 1 << 20)).toEqual(JSON.parse(text));
  });

  it("bounds values parsed elsewhere (YAML, form fields) without recursion, cycles included", () => {
    let v: unknown = 1;
    for (let i = 0; i < 100_000; i++) v = [v];
    expect(valueNestsDeeper(v)).toBe(true);
    expect(valueNestsDeeper({ a: [{ b: 1 }] })).toBe(false);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(valueNestsDeeper(cyclic)).toBe(true);
  });

  it("the NUL check walks any depth without overflowing the stack, and still names the field", () => {
    let v: unknown = "x\u0000";
    for (let i = 0; i < 100_000; i++) v = [v];
    expect(() => refuseNul(v, "body")).toThrow(
      expect.objectContaining({ details: [{ path: `body${"[0]".repeat(100_000)}`, message: "Must not contain NUL characters" }] }),
    );
    let clean: unknown = "ok";
    for (let i = 0; i < 100_000; i++) clean = { a: clean };
    expect(() => refuseNul(clean, "body")).not.toThrow();
  });
});
