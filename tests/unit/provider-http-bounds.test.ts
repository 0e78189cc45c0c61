import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_MAX_BODY_BYTES, providerRequest } from "@/lib/providers/http";
import { isProviderError, offerProblem } from "@/lib/providers/types";

// What a provider's answer may cost us: its size is bounded (nothing is buffered past the limit,
// declared or not), a body that never finishes fails at the call's deadline, and one malformed
// offer is skipped on its own (offerProblem), never failing the refresh of the others.

let server: http.Server;
let base = "";
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/huge-declared") {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(PROVIDER_MAX_BODY_BYTES + 1) });
      res.end();
    } else if (req.url === "/huge-chunked") {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const more = () => {
        while (sent <= PROVIDER_MAX_BODY_BYTES + chunk.length && res.write(chunk)) sent += chunk.length;
        if (sent <= PROVIDER_MAX_BODY_BYTES + chunk.length) res.once("drain", more);
        else res.end();
      };
      res.on("error", () => {});
      more();
    } else if (req.url === "/stalls") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: true }));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const call = (path: string, timeoutMs = 2_000) =>
  providerRequest({ provider: "runpod", method: "GET", url: `${base}${path}`, headers: {}, timeoutMs, what: "list offers" });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => (isProviderError(e) ? `${e.kind}: ${e.message}` : `other: ${String(e)}`),
  );

describe("a provider's answer", () => {
  it("is read when it is of a sane size", async () => {
    expect((await call("/ok")).body).toEqual({ ok: true });
  });
  it("fails the call past the size limit, declared or streamed", async () => {
    expect(await failure(call("/huge-declared"))).toMatch(/^unavailable: list offers: the answer is larger than/);
    expect(await failure(call("/huge-chunked"))).toMatch(/^unavailable: list offers: the answer is larger than/);
  });
  it("fails at the deadline when its body never finishes", async () => {
    const t = Date.now();
    expect(await failure(call("/stalls", 300))).toMatch(/^unavailable: list offers: .*300 ms/);
    expect(Date.now() - t).toBeLessThan(2_000);
  });
});

describe("one offer", () => {
  const good = {
    offerId: "a|1x|od|US",
    providerGpuType: "NVIDIA H100",
    gpuCount: 1,
    region: "US",
    interruptible: false,
    costCentsPerGpuHour: 299,
  };
  it("is kept when every field is of its type and in range", () => {
    expect(offerProblem(good)).toBeNull();
  });
  it("names the field that makes it unkeepable", () => {
    expect(offerProblem({ ...good, costCentsPerGpuHour: 5_000_000_000 })).toMatch(/^costCentsPerGpuHour/);
    expect(offerProblem({ ...good, costCentsPerGpuHour: 2.5 })).toMatch(/^costCentsPerGpuHour/);
    expect(offerProblem({ ...good, providerGpuType: 42 })).toMatch(/^providerGpuType/);
    expect(offerProblem({ ...good, gpuCount: 65 })).toMatch(/^gpuCount/);
    expect(offerProblem({ ...good, region: "" })).toMatch(/^region/);
    expect(offerProblem({ ...good, interruptible: "no" })).toMatch(/^interruptible/);
    expect(offerProblem(null)).toBe("not an object");
  });
});
