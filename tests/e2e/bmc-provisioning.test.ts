import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { makeCluster, makeKey, makeTenant } from "../support/fixtures";
import { api, expectErrorShape } from "../support/http";
import { nodeWithSimBmc } from "./world-bmc";

// The BMC and provisioning routes through the production server: what they refuse and how they
// say it, that no answer ever carries a BMC password or reaches a tenant, and a provisioning the
// server's own background runner (the in-process driver) carries out to the end.

let operator: string;
let tenant: string;
let clusterId: string;

beforeAll(async () => {
  operator = (await makeKey({ scope: "operator" })).key;
  tenant = (await makeKey({ scope: "tenant", tenant_id: (await makeTenant()).id })).key;
  clusterId = (await makeCluster()).id;
});

const until = async <T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 60_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(v).slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

describe("BMC routes", () => {
  it("never hand back the password, and a tenant learns nothing of a BMC", async () => {
    const { nodeId, bmc } = await nodeWithSimBmc(operator, clusterId);
    const put = await api("PUT", `/api/nodes/${nodeId}/bmc`, {
      key: operator,
      body: { url: `${bmc.url}/redfish/v1`, username: bmc.username, password: bmc.password, verify_tls: false },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ node_id: nodeId, url: bmc.url, username: bmc.username, verify_tls: false, password_readable: true });
    expect(JSON.stringify(put.body)).not.toContain(bmc.password);
    const get = await api("GET", `/api/nodes/${nodeId}/bmc`, { key: operator });
    expect(get.status).toBe(200);
    expect(Object.keys(get.body)).not.toContain("password");
    expect(JSON.stringify(get.body)).not.toContain(bmc.password);
    for (const [method, path, body] of [
      ["GET", `/api/nodes/${nodeId}/bmc`, undefined],
      ["PUT", `/api/nodes/${nodeId}/bmc`, { url: bmc.url, username: "x", password: "y", verify_tls: false }],
      ["POST", `/api/nodes/${nodeId}/power`, { action: "off" }],
      ["POST", `/api/nodes/${nodeId}/provision`, { image_url: "http://images.example/x.iso" }],
      ["GET", `/api/nodes/${nodeId}/provisioning`, undefined],
      ["DELETE", `/api/nodes/${nodeId}/bmc`, undefined],
    ] as const) {
      const r = await api(method, path, { key: tenant, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(JSON.stringify(r.body)).not.toContain(bmc.url);
    }
    // the node itself, as the tenant-facing views describe nodes, carries no BMC detail
    const node = await api("GET", `/api/nodes/${nodeId}`, { key: operator });
    expect(JSON.stringify(node.body)).not.toContain(bmc.url);
    // and the stored row holds a ciphertext, not the password
    const row = await db().nodeBmc.findUniqueOrThrow({ where: { nodeId } });
    expect(row.passwordCiphertext).not.toContain(bmc.password);
  });

  it("refuses bad input with 400 naming the field, and changes nothing", async () => {
    const { nodeId, bmc } = await nodeWithSimBmc(operator, clusterId);
    const before = await db().nodeBmc.findUniqueOrThrow({ where: { nodeId } });
    const good = { url: bmc.url, username: bmc.username, password: bmc.password, verify_tls: false };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["no verify_tls with http", { ...good, verify_tls: undefined }, "verify_tls"],
      ["verify_tls true with http", { ...good, verify_tls: true }, "verify_tls"],
      ["a huge password", { ...good, password: "p".repeat(10_000) }, "password"],
      ["not a URL", { ...good, url: "bmc at rack 12" }, "url"],
      ["an ftp URL", { ...good, url: "ftp://10.1.1.1" }, "url"],
      ["credentials in the URL", { ...good, url: `http://root:calvin@${new URL(bmc.url).host}` }, "url"],
      ["a resource path instead of the BMC", { ...good, url: `${bmc.url}/redfish/v1/Systems/1` }, "url"],
      ["the cloud metadata service", { ...good, url: "http://169.254.169.254" }, "url"],
      ["IPv6 link-local", { ...good, url: "http://[fe80::1]" }, "url"],
      ["outside BMC_NETWORKS", { ...good, url: "https://10.9.8.7", verify_tls: true }, "url"],
      ["an empty username", { ...good, username: "" }, "username"],
      ["a control character in the username", { ...good, username: "ro\u0000ot" }, "username"],
      [
        "a CA that is not a certificate",
        {
          ...good,
          url: bmc.url.replace("http:", "https:"),
          verify_tls: true,
          ca_pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----",
        },
        "ca_pem",
      ],
      ["a CA without verification", { ...good, ca_pem: "x" }, "ca_pem"],
      ["a system id with spaces", { ...good, system_id: "System 1" }, "system_id"],
    ];
    for (const [what, body, field] of cases) {
      const r = await api("PUT", `/api/nodes/${nodeId}/bmc`, { key: operator, body });
      expect(r.status, what).toBe(400);
      expectErrorShape(r, "validation_failed");
      expect(
        r.body.error.details.map((d: { path: string }) => d.path),
        what,
      ).toContain(field);
    }
    const after = await db().nodeBmc.findUniqueOrThrow({ where: { nodeId } });
    expect(after.updatedAt).toEqual(before.updatedAt);
    expect(after.passwordCiphertext).toBe(before.passwordCiphertext);

    for (const [what, body] of [
      ["no image", {}],
      ["an ftp image", { image_url: "ftp://images.example/a.iso" }],
      ["credentials in the image URL", { image_url: "https://u:p@images.example/a.iso" }],
      ["not a URL", { image_url: "the usual image" }],
    ] as const) {
      const r = await api("POST", `/api/nodes/${nodeId}/provision`, { key: operator, body });
      expect(r.status, what).toBe(400);
      expect(
        r.body.error.details.map((d: { path: string }) => d.path),
        what,
      ).toContain("image_url");
    }
    const power = await api("POST", `/api/nodes/${nodeId}/power`, { key: operator, body: { action: "reboot-now" } });
    expect(power.status).toBe(400);
    expect(power.body.error.details[0].path).toBe("action");
    expect(await db().nodeWorkflow.count({ where: { nodeId } })).toBe(0);
  });

  it("says how a BMC failed: 502 naming the field, the failure kept on the BMC", async () => {
    const { nodeId, bmc } = await nodeWithSimBmc(operator, clusterId);
    await bmc.fault("auth");
    const refused = await api("POST", `/api/nodes/${nodeId}/power`, { key: operator, body: { action: "off" } });
    expect(refused.status).toBe(502);
    expectErrorShape(refused, "bad_gateway");
    expect(refused.body.error.details).toEqual([{ path: "bmc.password", message: "credentials_refused" }]);
    await bmc.fault("clear");
    await bmc.fault("unreachable");
    const gone = await api("POST", `/api/nodes/${nodeId}/power`, { key: operator, body: { action: "off" } });
    expect(gone.status).toBe(502);
    expect(gone.body.error.details).toEqual([{ path: "bmc.url", message: "unreachable" }]);
    expect((await api("GET", `/api/nodes/${nodeId}/bmc`, { key: operator })).body.last_error).toMatchObject({ kind: "unreachable" });
    await bmc.fault("clear");
    const ok = await api("POST", `/api/nodes/${nodeId}/power`, { key: operator, body: { action: "off" } });
    expect(ok.status).toBe(202);
    expect(ok.body.power).toMatchObject({ action: "off", reset_type: "ForceOff", power_state_before: "On" });
    expect(bmc.state.power).toBe("Off");
    // no BMC at all: 409, not 502
    await api("DELETE", `/api/nodes/${nodeId}/bmc`, { key: operator });
    const none = await api("POST", `/api/nodes/${nodeId}/power`, { key: operator, body: { action: "on" } });
    expect(none.status).toBe(409);
    expect((await api("GET", `/api/nodes/${nodeId}/bmc`, { key: operator })).status).toBe(404);
  });
});

describe("provisioning by the server's background runner", () => {
  it("runs every step against the BMC and hands the node to inspection once its agent is back", async () => {
    const { nodeId, bmc } = await nodeWithSimBmc(operator, clusterId);
    const started = await api("POST", `/api/nodes/${nodeId}/provision`, {
      key: operator,
      body: { image_url: "http://images.example/gpu-node.iso" },
    });
    expect(started.status).toBe(202);
    expect(started.body.provisioning).toMatchObject({
      status: "running",
      phase: "redfish",
      current_step: "discover",
      image_url: "http://images.example/gpu-node.iso",
    });
    // a second one while it runs: refused
    const twice = await api("POST", `/api/nodes/${nodeId}/provision`, {
      key: operator,
      body: { image_url: "http://images.example/gpu-node.iso" },
    });
    expect(twice.status).toBe(409);
    // and so is power, which the provisioning owns meanwhile
    expect((await api("POST", `/api/nodes/${nodeId}/power`, { key: operator, body: { action: "off" } })).status).toBe(409);
    const done = await until(
      async () => (await api("GET", `/api/nodes/${nodeId}/provisioning`, { key: operator })).body.provisioning,
      (p: { status: string; phase: string; steps: Array<{ name: string; status: string }> }) => p.phase !== "redfish",
    );
    // the Redfish part is done; the node's inspection (attestation) goes on under the same workflow
    expect(done).toMatchObject({ status: "running", phase: "inspection" });
    const steps = done.steps.map((s: { name: string; status: string }) => `${s.name}:${s.status}`);
    // the inspection's own steps follow as the handover runner reaches them (its attest step, running)
    expect(steps.slice(7).every((s: string) => s.startsWith("attest:"))).toBe(true);
    expect(steps.slice(0, 7)).toEqual([
      "discover:succeeded",
      "power_off:succeeded",
      "eject_media:succeeded",
      "insert_media:succeeded",
      "boot_override:succeeded",
      "power_on:succeeded",
      "wait_for_agent:succeeded",
    ]);
    expect(JSON.stringify(done)).not.toContain(bmc.password);
    expect(bmc.state.lastBoot).toEqual({ from: "Cd", image: "http://images.example/gpu-node.iso" });
    expect((await api("GET", `/api/nodes/${nodeId}`, { key: operator })).body.node.status).toBe("inspecting");
  });

  it("a node that has never been provisioned has no provisioning to show", async () => {
    const { nodeId } = await nodeWithSimBmc(operator, clusterId);
    const r = await api("GET", `/api/nodes/${nodeId}/provisioning`, { key: operator });
    expect(r.status).toBe(404);
    expectErrorShape(r, "not_found");
  });
});
