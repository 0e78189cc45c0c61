import fc from "fast-check";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { FloorMap } from "@/components/fleet/floor-map";
import { rackPaths } from "@/components/fleet/rack-tile";
import { decodeNode, decodeRack, encodeNode, encodeRack, utilBand } from "@/lib/fleet/floor-code";
import { describeRack, rackHref, summarizeFloor, summarizeRack } from "@/lib/fleet/floor-summary";
import { NODE_STATUSES } from "@/lib/fleet/node-lifecycle";
import type { FloorNode, FloorRack } from "@/lib/fleet/queries";

// The overview's compact floor: what each node's letters say, what the drawing shows for every
// state an operator looks for, the rack summaries and drill-down links, and its weight at scale.

// every node status has a letter of its own (a new status without one would be drawn as available)
const STATUSES = [...NODE_STATUSES];
const gpu = (index: number, util: number | null, status = "available", allocated = false) => ({
  id: `g${index}`,
  index,
  status,
  util,
  temp: null,
  allocated,
});
const node = (
  hostname: string,
  status = "available",
  gpus = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => gpu(i, 60)),
  reservedBy: string | null = null,
): FloorNode => ({ id: `id-${hostname}`, hostname, status, reservedBy, gpus });
const rack = (nodes: FloorNode[], over: Partial<FloorRack> = {}): FloorRack => ({
  cluster: "east",
  clusterId: "11111111-1111-4111-8111-111111111111",
  podName: "p1",
  rackName: "r1",
  pod: "p1",
  rack: "r1",
  nodes,
  ...over,
});

describe("floor code", () => {
  it("writes a node as its status letter and a character per GPU", () => {
    expect(encodeNode(node("a", "available", [gpu(0, 5), gpu(1, 30), gpu(2, 65), gpu(3, 95), gpu(4, null), gpu(5, 99, "unhealthy")]))).toBe(
      "a0123-x",
    );
    expect(encodeNode(node("b", "quarantined", [gpu(0, 5)], "Acme"))).toBe("Q0");
  });

  it("gives each handover state its own letter and tone, never the available node's", () => {
    for (const s of ["provisioning", "releasing", "wiping", "inspecting", "attestation_failed"]) {
      const code = encodeNode(node("n", s));
      expect(code[0]).not.toBe("a");
      expect(decodeNode(code)).toMatchObject({ status: s, cells: Array(8).fill(s) });
    }
    expect(new Set(NODE_STATUSES.map((s) => encodeNode(node("n", s))[0])).size).toBe(NODE_STATUSES.length);
  });

  it("draws unhealthy GPUs red on any node and tints the others of a node out of service", () => {
    expect(decodeNode("a0123-x").cells).toEqual(["idle", "low", "mid", "high", "nodata", "unhealthy"]);
    expect(decodeNode("o00x")).toEqual({ status: "offline", reserved: false, cells: ["offline", "offline", "unhealthy"] });
    expect(decodeNode("M3")).toEqual({ status: "maintenance", reserved: true, cells: ["maintenance"] });
    for (const s of ["registered", "draining", "quarantined"]) expect(decodeNode(encodeNode(node("n", s))).cells).toEqual(Array(8).fill(s));
  });

  it("round-trips any node's status, reservation and GPU states", () => {
    const gpuArb = fc.record({
      status: fc.constantFrom("available", "unhealthy"),
      util: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.constantFrom(...STATUSES),
        fc.option(fc.string({ minLength: 1 }), { nil: null }),
        fc.array(gpuArb, { maxLength: 16 }),
        (status, reservedBy, gpus) => {
          const d = decodeNode(encodeNode({ status, reservedBy, gpus }));
          expect(d.status).toBe(status);
          expect(d.reserved).toBe(reservedBy !== null);
          expect(d.cells).toHaveLength(gpus.length);
          gpus.forEach((g, i) => {
            if (g.status === "unhealthy") expect(d.cells[i]).toBe("unhealthy");
            else if (status !== "available") expect(d.cells[i]).toBe(status);
            else expect(d.cells[i]).toBe(g.util === null ? "nodata" : utilBand(g.util));
          });
        },
      ),
    );
  });

  it("keeps a rack's nodes in order", () => {
    const nodes = [node("a"), node("b", "offline"), node("c", "available", [])];
    expect(decodeRack(encodeRack(nodes)).map((n) => n.status)).toEqual(["available", "offline", "available"]);
    expect(decodeRack("")).toEqual([]);
  });
});

describe("rack drawing", () => {
  it("draws a row per node, one path per tone, equal neighbours as one run", () => {
    const { height, paths } = rackPaths("a33333333 o00000000 A000x0000", "small");
    expect(height).toBe(3 * 5 - 1);
    const byTone = Object.fromEntries(paths);
    expect(byTone.high).toBe("M3 2h47"); // eight busy GPUs: one command
    expect(byTone.offline).toBe("M3 7h47");
    expect(byTone.unhealthy).toBe("M21 12h5"); // GPU 3 of the third node
    expect(byTone.idle).toBe("M3 12h17M27 12h23");
    expect(byTone.reserved).toBe("M0 12h2");
  });
});

describe("rack summaries", () => {
  const r = rack([
    node("n1"),
    node("n2", "available", [gpu(0, 10, "unhealthy"), gpu(1, 90, "available", true)]),
    node("n3", "offline"),
    node("n4", "quarantined", undefined, "Acme AI"),
  ]);

  it("counts what an operator scans for and lists the nodes to check, most urgent first", () => {
    const s = summarizeRack(r);
    expect(s).toMatchObject({
      nodes: 4,
      gpus: 26,
      unhealthyGpus: 1,
      allocatedGpus: 1,
      reservedNodes: 1,
      outOfService: { offline: 1, quarantined: 1 },
      attention: ["n4", "n3", "n2"],
    });
    expect(s.busyGpus).toBe(8 + 1 + 8 + 8);
    const text = describeRack(s, "pod p1");
    expect(text).toContain("Rack r1 in pod p1: 4 nodes, 26 GPUs");
    expect(text).toContain("1 unhealthy");
    expect(text).toContain("nodes 1 offline, 1 quarantined");
    expect(text).toContain("1 reserved");
    expect(text).toContain("check n4, n3, n2");
  });

  it("links each rack to its page, nodes without a pod or rack included", () => {
    expect(rackHref(r)).toBe("/admin/clusters/11111111-1111-4111-8111-111111111111/rack?pod=p1&rack=r1");
    expect(rackHref({ ...r, podName: null, rackName: null })).toBe("/admin/clusters/11111111-1111-4111-8111-111111111111/rack");
    expect(rackHref({ ...r, rackName: "a&b" })).toContain("rack=a%26b");
  });

  it("groups racks by pod, naming the cluster when there are several", () => {
    expect(summarizeFloor([r, rack([node("x")], { rackName: "r2", rack: "r2" })]).map((p) => [p.title, p.racks.length])).toEqual([
      ["pod p1", 2],
    ]);
    const two = summarizeFloor([r, rack([node("y")], { cluster: "west", clusterId: "22222222-2222-4222-8222-222222222222" })]);
    expect(two.map((p) => p.title)).toEqual(["east · pod p1", "west · pod p1"]);
  });
});

describe("the overview's floor", () => {
  // 1,250 nodes of 8 GPUs in 10 pods of 10 racks, every state present
  const fleet: FloorRack[] = Array.from({ length: 100 }, (_, ri) =>
    rack(
      Array.from({ length: 13 }, (_, ni) => {
        const i = ri * 13 + ni;
        const gpus = [0, 1, 2, 3, 4, 5, 6, 7].map((g) =>
          gpu(g, i % 5 === 0 ? g : 55 + ((i * 13 + g * 7) % 45), (i * 8 + g) % 113 === 0 ? "unhealthy" : "available"),
        );
        return node(
          `node-${i}`,
          i % 53 === 7 ? "offline" : i % 97 === 11 ? "quarantined" : i % 89 === 5 ? "maintenance" : "available",
          gpus,
          i % 10 === 4 ? "Acme AI" : null,
        );
      }),
      { pod: `p${ri % 10}`, podName: `p${ri % 10}`, rack: `r${ri}`, rackName: `r${ri}` },
    ),
  );
  const html = renderToString(createElement(FloorMap, { pods: summarizeFloor(fleet) }));

  it("is a link per rack with its summary as the tooltip, and a legend of every state", () => {
    expect(html.match(/<a /g)).toHaveLength(100);
    expect(html).toContain('href="/admin/clusters/11111111-1111-4111-8111-111111111111/rack?pod=p3&amp;rack=r3"');
    expect(html).toMatch(/title="Rack r\d+ in pod p\d: 13 nodes, 104 GPUs; [^"]*unhealthy/);
    for (const label of [
      "&lt; 10 %",
      "≥ 80 %",
      "no data",
      "unhealthy GPU",
      "quarantined node",
      "offline node",
      "maintenance node",
      "reserved node",
    ])
      expect(html).toContain(label);
    expect(html).toMatch(/aria-label="Legend"/);
    expect(html).toContain("ft-unhealthy");
    expect(html).toContain("ft-reserved");
  });

  it("stays small at 10,000 GPUs: its HTML, and the props the page's React payload carries for it", () => {
    const props = JSON.stringify(summarizeFloor(fleet));
    expect(Buffer.byteLength(html)).toBeLessThan(120 * 1024);
    expect(Buffer.byteLength(props)).toBeLessThan(60 * 1024);
  });
});
