import { describe, expect, it } from "vitest";
import { attachBody, readJsonBody, readTextBody, readWithinLimit } from "@/lib/http/read-body";
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
