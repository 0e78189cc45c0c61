import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseCidrList } from "@/lib/http/client-address";
import { RedfishClient, type Exchange, type RedfishTarget } from "@/lib/redfish/client";
import { RedfishError } from "@/lib/redfish/errors";
import {
  discoverManager,
  discoverSystem,
  ejectMedia,
  findCdMedia,
  insertMedia,
  setOneTimeCdBoot,
  setPower,
} from "@/lib/redfish/operations";
import { startRedfishMockup } from "../support/redfish-mockup";
import { ensureSystemTool } from "../support/system-packages";
import { tempDir } from "../support/temp-dir";

// Our Redfish client against a DMTF-style mockup tree (tests/support/redfish-mockup: the layout and
// shapes of DMTF's public mockups, with a system called NW-7Q2C9R1, virtual media on the Manager
// behind a floppy device, Reset values only in an ActionInfo, weak ETags compared strongly, a 202
// InsertMedia task and an EjectMedia that wants a body): it provisions the way the workflow does and
// names each workaround it needed; then each clear failure state.

const loopback = { networks: parseCidrList("127.0.0.0/8")! };
const fast = { backoffMs: 5, maxBackoffMs: 20, taskPollMs: 5, powerPollMs: 5, timeoutMs: 3_000 };
const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function mockup(opts: Parameters<typeof startRedfishMockup>[0] = {}) {
  const m = await startRedfishMockup(opts);
  servers.push(m);
  return m;
}

function client(target: Partial<RedfishTarget> & { url: string }, log: Exchange[] = []) {
  return new RedfishClient(
    { username: "root", password: "calvin-mockup", verifyTls: false, policy: loopback, ...target },
    { timing: fast, record: (e) => log.push(e) },
  );
}

describe("the Redfish client against a DMTF-style mockup", () => {
  it("discovers from the service root and provisions: power off, eject, insert (202 task), one-time Cd boot, power on", async () => {
    const m = await mockup();
    const log: Exchange[] = [];
    const c = client({ url: m.url }, log);
    await c.connect();
    expect(c.authMode).toBe("session");
    const system = await discoverSystem(c, {});
    expect(system.path).toBe("/redfish/v1/Systems/NW-7Q2C9R1");
    const manager = await discoverManager(c, system);
    expect(manager?.path).toBe("/redfish/v1/Managers/BMC");
    const cd = await findCdMedia(c, system, manager);
    // the floppy device comes first in the collection and is passed over
    expect(cd).toMatchObject({ on: "Manager", media: { path: "/redfish/v1/Managers/BMC/VirtualMedia/CD1" } });

    expect(await setPower(c, system.path, "off", { wait: true })).toMatchObject({ reset_type: "ForceOff", power_state: "Off" });
    expect(await ejectMedia(c, cd.media.path)).toEqual({ ejected: true });
    await insertMedia(c, cd.media.path, "https://images.example/gpuforge-node-2026.12.iso");
    expect(await setOneTimeCdBoot(c, system.path)).toEqual({ target: "Cd", via: system.path });
    expect(await setPower(c, system.path, "on", { wait: true })).toMatchObject({ reset_type: "On", power_state: "On" });
    await c.close();

    expect(m.doc(system.path)).toMatchObject({
      PowerState: "On",
      Boot: { BootSourceOverrideEnabled: "Once", BootSourceOverrideTarget: "Cd" },
    });
    expect(m.doc(cd.media.path)).toMatchObject({ Inserted: true, Image: "https://images.example/gpuforge-node-2026.12.iso" });
    expect(m.sessions()).toBe(0);
    // the Reset values came from the ActionInfo; nothing was asked of a path the BMC did not give
    expect(log.some((e) => e.path === "/redfish/v1/Systems/NW-7Q2C9R1/ResetActionInfo")).toBe(true);
    expect(log.every((e) => m.doc(e.path) || /Actions|TaskMonitors|Sessions/.test(e.path))).toBe(true);
    expect(log.some((e) => /Systems\/1\b/.test(e.path))).toBe(false);
    // each workaround named where it was needed
    const quirks = log.filter((e) => e.quirk).map((e) => `${e.method} ${e.path.split("/").slice(-2).join("/")} ${e.quirk}`);
    expect(quirks).toEqual(
      expect.arrayContaining([
        "POST Actions/VirtualMedia.EjectMedia eject_needs_empty_body",
        "PATCH Systems/NW-7Q2C9R1 weak_etag_rejected",
      ]),
    );
    // the PATCH carried the ETag: first as read (weak), then its strong form
    expect(m.log.filter((r) => r.method === "PATCH").map((r) => r.ifMatch?.startsWith("W/"))).toEqual([true, false]);
    // the task monitor was followed until the task completed
    expect(log.filter((e) => e.path.includes("TaskMonitors")).map((e) => e.status)).toEqual([202, 202, 200]);
    // every request after the login carried the session token, and no password was logged
    expect(m.log.slice(2).every((r) => r.auth === "session")).toBe(true);
    expect(JSON.stringify(log)).not.toContain("calvin-mockup");
  });

  it("logs in again once when the session expires, and repeats GETs that failed with 5xx", async () => {
    const m = await mockup();
    const log: Exchange[] = [];
    const c = client({ url: m.url }, log);
    await c.connect();
    const system = await discoverSystem(c, {});
    m.faults.expireSessions = true;
    m.faults.serverErrors = 2;
    expect(await setPower(c, system.path, "off", { wait: true })).toMatchObject({ power_state: "Off" });
    expect(log.map((e) => e.quirk).filter(Boolean)).toEqual(["session_expired", "server_error", "server_error"]);
  });

  it("refuses a wrong password as credentials_refused, after trying basic auth once", async () => {
    const m = await mockup();
    const c = client({ url: m.url, password: "wrong" });
    const e = await c.connect().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RedfishError);
    expect((e as RedfishError).kind).toBe("credentials_refused");
    expect(m.log.map((r) => `${r.method} ${r.path} ${r.auth}`)).toEqual([
      "GET /redfish/v1 none",
      "POST /redfish/v1/SessionService/Sessions none",
      "GET /redfish/v1/Systems basic",
    ]);
  });

  it("calls a refused image media_refused with the BMC's own message", async () => {
    const m = await mockup();
    const c = client({ url: m.url });
    await c.connect();
    const system = await discoverSystem(c, {});
    const cd = await findCdMedia(c, system, await discoverManager(c, system));
    await ejectMedia(c, cd.media.path);
    m.faults.mediaRefused = true;
    const e = (await insertMedia(c, cd.media.path, "https://images.example/missing.iso").catch((x: unknown) => x)) as RedfishError;
    expect(e.kind).toBe("media_refused");
    expect(e.message).toContain("cannot be retrieved");
  });

  it("calls a closed port unreachable after its retries, and an address outside BMC_NETWORKS refused without a request", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const log: Exchange[] = [];
    const e = (await client({ url: `http://127.0.0.1:${port}` }, log)
      .connect()
      .catch((x: unknown) => x)) as RedfishError;
    expect(e.kind).toBe("unreachable");
    expect(log).toHaveLength(6);
    expect(log.slice(1).every((x) => x.quirk === "connection_lost")).toBe(true);

    const refused = (await client({ url: "http://127.0.0.1:9", policy: { networks: [] } })
      .connect()
      .catch((x: unknown) => x)) as RedfishError;
    expect(refused.kind).toBe("address_refused");
    const metadata = (await client({ url: "http://169.254.169.254", policy: { networks: parseCidrList("10.0.0.0/8")! } })
      .connect()
      .catch((x: unknown) => x)) as RedfishError;
    expect(metadata.kind).toBe("address_refused");
    // a name is checked by what it resolves to, at connect time
    const named = (await client({ url: "http://localhost:9", policy: { networks: [] } })
      .connect()
      .catch((x: unknown) => x)) as RedfishError;
    expect(named.kind).toBe("address_refused");
  });

  it("refuses a BMC certificate it was not told to trust, and trusts one pinned with its CA", async () => {
    ensureSystemTool("openssl");
    const dir = tempDir("bmc-tls-");
    execFileSync(
      "/usr/bin/openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=bmc.test",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        path.join(dir, "key.pem"),
        "-out",
        path.join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    const tls = { key: readFileSync(path.join(dir, "key.pem"), "utf8"), cert: readFileSync(path.join(dir, "cert.pem"), "utf8") };
    const m = await mockup({ tls });
    const untrusted = (await client({ url: m.url, verifyTls: true })
      .connect()
      .catch((x: unknown) => x)) as RedfishError;
    expect(untrusted.kind).toBe("tls_untrusted");
    const pinned = client({ url: m.url, verifyTls: true, caPem: tls.cert });
    await pinned.connect();
    expect(pinned.authMode).toBe("session");
    await pinned.close();
  });

  it("never follows a redirect or a link to another host, and refuses an answer too large to be Redfish", async () => {
    const odd = http.createServer((req, res) => {
      if (req.url === "/redfish/v1/") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ Systems: { "@odata.id": "http://203.0.113.9/redfish/v1/Systems" }, Links: {} }));
      } else if (req.url === "/redfish/v1/SessionService/Sessions") {
        res.writeHead(301, { location: "https://elsewhere.example/redfish/v1/SessionService/Sessions" }).end();
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ pad: "x".repeat(2 * 1024 * 1024) }));
      }
    });
    await new Promise<void>((r) => odd.listen(0, "127.0.0.1", r));
    servers.push({ close: () => new Promise<void>((r) => odd.close(() => r())) });
    const url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    const log: Exchange[] = [];
    const e = (await client({ url }, log)
      .connect()
      .catch((x: unknown) => x)) as RedfishError;
    // the 301 login is not followed; basic auth is tried against the Systems link, which leaves the BMC
    expect(e.kind).toBe("bad_answer");
    expect(e.message).toContain("leads away from the BMC");
    expect(log.map((x) => x.status)).toEqual([200, 301]);
    const big = new RedfishClient({ url, username: "u", password: "p", verifyTls: false, policy: loopback }, { timing: fast });
    const tooBig = (await big.call("GET", "/redfish/v1/Systems/x").catch((x: unknown) => x)) as RedfishError;
    expect(tooBig.kind).toBe("bad_answer");
  });
});
