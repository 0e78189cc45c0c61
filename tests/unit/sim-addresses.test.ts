import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  allocateSimAddresses,
  SIM_ADDRESS_CAPACITY,
  simAddressAt,
  simAddressesFromBook,
  simAddressKey,
  simAddressOrdinal,
} from "@/agent/src/sim-addresses";
import { nodeAddressProblem } from "@/lib/fleet/node-address";
import { parseCidrList } from "@/lib/http/client-address";
import { tempDir } from "../support/temp-dir";

/** The soak's fleet at 10,000 nodes: two clusters of 5,000, racks of ten, pods of ten racks (scripts/soak/seed.ts). */
function soakKeys(nodes: number, clusters = ["c0ffee00-aaaa-4bbb-8ccc-000000000001", "c0ffee00-aaaa-4bbb-8ccc-000000000002"]) {
  const keys: string[] = [];
  const perCluster = nodes / clusters.length;
  for (const c of clusters)
    for (let i = 0; i < perCluster; i++) {
      const [p, r, n] = [Math.floor(i / 100), Math.floor(i / 10) % 10, i % 10];
      // the same six-character tag in both clusters: the hostnames alone repeat
      keys.push(simAddressKey(c, `sim-${c.slice(0, 6)}-p${p + 1}-r${r + 1}-n${n + 1}`));
    }
  return keys;
}

describe("simulated node addresses", () => {
  it("gives 10,000 nodes of two clusters distinct loopback addresses a node may register, never 127.0.0.1", () => {
    const keys = soakKeys(10_000);
    expect(new Set(keys).size).toBe(10_000);
    const book = allocateSimAddresses(new Map(), keys);
    const addresses = keys.map((k) => book.get(k)!);
    expect(new Set(addresses).size).toBe(10_000);
    expect(addresses).not.toContain("127.0.0.1");
    const policy = { networks: parseCidrList("127.0.0.0/8")!, allowLoopback: false };
    for (const a of addresses) {
      expect(a).toMatch(/^127\.\d+\.\d+\.\d+$/);
      expect(nodeAddressProblem(a, policy)).toBeNull();
    }
    // in order from the start of 127.0.0.0/8: the first and the 10,000th
    expect(addresses[0]).toBe("127.0.0.2");
    expect(addresses.at(-1)).toBe(simAddressAt(9_999));
  });

  it("maps ordinals to addresses and back, one to one, skipping .0, .255 and 127.0.0.1", () => {
    expect([0, 1, 252, 253, 254, 506, 507].map(simAddressAt)).toEqual([
      "127.0.0.2",
      "127.0.0.3",
      "127.0.0.254",
      "127.0.1.1",
      "127.0.1.2",
      "127.0.1.254",
      "127.0.2.1",
    ]);
    expect(simAddressAt(SIM_ADDRESS_CAPACITY - 1)).toBe("127.255.255.254");
    expect(() => simAddressAt(SIM_ADDRESS_CAPACITY)).toThrow(RangeError);
    expect(() => simAddressAt(-1)).toThrow(RangeError);
    for (const k of [0, 1, 252, 253, 65_000, 1_000_003, SIM_ADDRESS_CAPACITY - 1]) expect(simAddressOrdinal(simAddressAt(k))).toBe(k);
    for (const a of ["127.0.0.1", "127.0.0.0", "127.0.1.255", "127.1.2.0", "10.0.0.2", "127.256.0.2", "127.0.0.02x", ""])
      expect(simAddressOrdinal(a)).toBeNull();
  });

  it("keeps a node's address when the fleet grows, shrinks or starts again, and hands out only free ones", () => {
    const first = allocateSimAddresses(new Map(), soakKeys(1_000));
    // the run starts again with more nodes: the first thousand keep theirs
    const grown = allocateSimAddresses(first, soakKeys(2_000));
    for (const [k, a] of first) expect(grown.get(k)).toBe(a);
    expect(new Set(grown.values()).size).toBe(grown.size);
    // nodes of another cluster, allocated later, get none of the addresses already held
    const other = allocateSimAddresses(grown, soakKeys(100, ["0ther000-0000-4000-8000-000000000009"]));
    expect(new Set(other.values()).size).toBe(other.size);
    expect(other.size).toBe(grown.size + 100);
  });

  it("drops entries that are not its addresses or repeat one, and allocates those keys again", () => {
    const known = new Map([
      ["c/a", "127.0.0.2"],
      ["c/b", "127.0.0.2"], // a hand-edited duplicate
      ["c/c", "127.0.0.1"],
      ["c/d", "not an address"],
    ]);
    const book = allocateSimAddresses(known, ["c/a", "c/b", "c/c", "c/d"]);
    expect(book.get("c/a")).toBe("127.0.0.2");
    expect(new Set(book.values()).size).toBe(4);
    expect([...book.values()]).not.toContain("127.0.0.1");
  });

  it("keeps the book in the state directory: the same addresses after a restart, none twice across simulators", () => {
    const dir = tempDir("gpuforge-sim-addresses-");
    const a = simAddressesFromBook(dir, soakKeys(200));
    expect(simAddressesFromBook(dir, soakKeys(200))).toEqual(a);
    // another simulator on the same directory (a second walk's fleet) gets none of them
    const b = simAddressesFromBook(dir, soakKeys(20, ["b0000000-0000-4000-8000-00000000000b"]));
    for (const x of b.values()) expect([...a.values()]).not.toContain(x);
    expect(existsSync(path.join(dir, "addresses.json.lock"))).toBe(false);
    const saved = JSON.parse(readFileSync(path.join(dir, "addresses.json"), "utf8")) as { addresses: Record<string, string> };
    expect(Object.keys(saved.addresses)).toHaveLength(220);
  });

  it("takes over a lock its holder left behind when it died, and refuses a file that is not its book", () => {
    const dir = tempDir("gpuforge-sim-addresses-");
    // a pid that cannot be running: the kernel's pid_max is at most 2^22
    writeFileSync(path.join(dir, "addresses.json.lock"), "4194305");
    expect(simAddressesFromBook(dir, ["c/a"]).get("c/a")).toBe("127.0.0.2");
    writeFileSync(path.join(dir, "addresses.json"), "{ not json");
    expect(() => simAddressesFromBook(dir, ["c/a"])).toThrow(/not the simulator's address book/);
    expect(existsSync(path.join(dir, "addresses.json.lock"))).toBe(false);
  });
});

describe("a fleet that cannot register", () => {
  it("ends the simulator's start with the node the control plane refused and why", async () => {
    const { FleetRegistrationError, startSimulator } = await import("@/agent/src/simulator");
    const { default: http } = await import("node:http");
    const registered: string[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const input = JSON.parse(body) as { hostname: string; address: string; gpus: Array<{ uuid: string }> };
        res.setHeader("content-type", "application/json");
        if (input.hostname.endsWith("-n3")) {
          res.writeHead(409).end(
            JSON.stringify({
              error: {
                code: "conflict",
                message: "Another node of the fleet has this address",
                details: [{ path: "address", message: "Taken" }],
              },
            }),
          );
          return;
        }
        registered.push(input.hostname);
        res.writeHead(201).end(
          JSON.stringify({
            node: { id: `id-${input.hostname}` },
            gpus: input.gpus.map((g, i) => ({ id: `${input.hostname}-${i}`, uuid: g.uuid })),
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const sim = startSimulator({
      baseUrl: `http://127.0.0.1:${port}`,
      clusters: [
        { clusterId: "c1", key: "gf_test", gpuType: "H100", memoryMb: 81_559, tdpW: 700, pods: 1, racksPerPod: 1, nodesPerRack: 40 },
      ],
      stateDir: tempDir("gpuforge-sim-register-"),
      log: () => {},
    });
    try {
      const failure = await sim.ready.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(FleetRegistrationError);
      const f = failure as InstanceType<typeof FleetRegistrationError>;
      expect(f.hostname).toBe("sim-c1-p1-r1-n3");
      expect(f.clusterId).toBe("c1");
      expect(f.address).toBe(sim.nodes.find((n) => n.hostname === "sim-c1-p1-r1-n3")!.address);
      expect(f.status).toBe(409);
      expect(f.code).toBe("conflict");
      expect(f.reason).toContain("Another node of the fleet has this address");
      expect(f.message).toContain("sim-c1-p1-r1-n3");
      // no registration starts once the refusal is heard (eight go at a time)
      expect(registered.length).toBeLessThan(39);
      expect(registered).not.toContain("sim-c1-p1-r1-n40");
    } finally {
      sim.stop();
      server.close();
    }
  });
});
