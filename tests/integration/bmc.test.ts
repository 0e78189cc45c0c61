import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// the simulated BMCs of these tests listen on loopback: this deployment lists it, explicitly
process.env.BMC_NETWORKS = "127.0.0.0/8";
import { startSimBmc, type SimBmc } from "../../agent/src/sim-bmc";
import { deleteBmc } from "@/lib/bmc/delete-bmc";
import { openBmc } from "@/lib/bmc/open-bmc";
import { powerNode } from "@/lib/bmc/power-node";
import { putBmc } from "@/lib/bmc/put-bmc";
import { findBmc, getBmcOrThrow } from "@/lib/bmc/queries";
import { putBmcBody } from "@/lib/bmc/schemas";
import { db } from "@/lib/db/client";
import { isAppError } from "@/lib/errors";
import { sealSecret } from "@/lib/settings/secret-box";
import { actorFor, agentPrincipal, operatorPrincipal, registeredFleet, tenantAdminPrincipal, makeTenant } from "../support/fixtures";

// Nodes' BMCs as the control plane stores and uses them: the password sealed at rest and never
// handed back, operators only, and power through the simulated BMC with each failure said plainly.

const operator = actorFor(operatorPrincipal);
let sim: SimBmc;
beforeAll(async () => {
  sim = await startSimBmc({ hostname: "bmc-test", password: "p4ss-Word!", timing: { powerMs: 0, bootMs: 10_000 } });
});
afterAll(async () => {
  await sim.close();
});

const body = (over: Record<string, unknown> = {}) =>
  putBmcBody.parse({ url: sim.url, username: "admin", password: "p4ss-Word!", verify_tls: false, ...over });
const errorOf = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  if (!isAppError(e)) throw new Error(`expected an AppError, got ${String(e)}`);
  return { code: e.code, message: e.message, details: e.details };
};

describe("BMC credentials", () => {
  it("seals the password at rest, never returns it, and binds it to its node", async () => {
    const { nodes } = await registeredFleet(2);
    const [a, b] = nodes.map((n) => n.node.id) as [string, string];
    const { bmc, created } = await putBmc(operator, a, body());
    expect(created).toBe(true);
    expect(bmc).toMatchObject({ url: sim.url, username: "admin", verify_tls: false, password_readable: true, last_contact_at: null });
    expect(JSON.stringify(bmc)).not.toContain("p4ss-Word!");
    const row = await db().nodeBmc.findUniqueOrThrow({ where: { nodeId: a } });
    expect(row.passwordCiphertext).toMatch(/^v1:/);
    expect(row.passwordCiphertext).not.toContain("p4ss");
    expect((await openBmc(a)).target.password).toBe("p4ss-Word!");
    // the audit log says what changed, never the password
    const audit = await db().auditLog.findFirstOrThrow({ where: { targetId: a, action: "node.bmc_set" } });
    expect(JSON.stringify(audit.details)).not.toContain("p4ss");
    // the same ciphertext on another node's row does not open: the node's id is sealed in with it
    await putBmc(operator, b, body({ password: "other" }));
    await db().nodeBmc.update({ where: { nodeId: b }, data: { passwordCiphertext: row.passwordCiphertext } });
    expect((await getBmcOrThrow(operatorPrincipal, b)).password_readable).toBe(false);
    expect(await errorOf(openBmc(b))).toMatchObject({ code: "conflict", details: [{ path: "bmc.password" }] });
    // and one sealed under another key (SETTINGS_ENCRYPTION_KEY rotated) neither
    await db().nodeBmc.update({
      where: { nodeId: b },
      data: { passwordCiphertext: sealSecret(randomBytes(32), `node_bmcs.password:${b}`, "x") },
    });
    expect((await getBmcOrThrow(operatorPrincipal, b)).password_readable).toBe(false);
  });

  it("stores the origin only, and a replacement forgets what the old BMC discovered", async () => {
    const { nodes } = await registeredFleet(1);
    const id = nodes[0]!.node.id;
    await putBmc(operator, id, body({ url: `${sim.url}/redfish/v1/` }));
    expect((await getBmcOrThrow(operatorPrincipal, id)).url).toBe(sim.url);
    await powerNode(operator, id, "on");
    expect((await getBmcOrThrow(operatorPrincipal, id)).discovered).toMatchObject({
      system: `/redfish/v1/Systems/${sim.systemId}`,
      auth: "session",
    });
    const again = await putBmc(operator, id, body({ username: "admin" }));
    expect(again).toMatchObject({ created: false, bmc: { discovered: null, last_contact_at: null } });
    expect(await db().auditLog.count({ where: { targetId: id, action: "node.bmc_replaced" } })).toBe(1);
  });

  it("refuses link-local addresses whatever BMC_NETWORKS lists, and names the field of every bad input", async () => {
    const { nodes } = await registeredFleet(1);
    const id = nodes[0]!.node.id;
    expect(await errorOf(putBmc(operator, id, body({ url: "http://169.254.169.254" })))).toMatchObject({
      code: "validation_failed",
      details: [{ path: "url", message: expect.stringContaining("loopback or link-local") }],
    });
    expect(
      await errorOf(
        putBmc(
          operator,
          id,
          body({ url: "https://127.0.0.5", verify_tls: true, ca_pem: "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----" }),
        ),
      ),
    ).toMatchObject({
      code: "validation_failed",
      details: [{ path: "ca_pem" }],
    });
    const issues = (input: Record<string, unknown>) =>
      putBmcBody.safeParse({ url: "https://10.1.2.3", username: "u", password: "p", ...input }).error?.issues.map((i) => i.path.join("."));
    expect(issues({ url: "http://10.1.2.3" })).toEqual(["verify_tls"]);
    expect(issues({ url: "http://10.1.2.3", verify_tls: true })).toEqual(["verify_tls"]);
    expect(issues({ url: "http://10.1.2.3", verify_tls: false })).toBeUndefined();
    expect(issues({ url: "ftp://10.1.2.3" })).toEqual(["url"]);
    expect(issues({ url: "https://admin:pw@10.1.2.3" })).toEqual(["url"]);
    expect(issues({ url: "https://10.1.2.3/redfish/v1/Systems/1" })).toEqual(["url"]);
    expect(issues({ url: "not a url" })).toEqual(["url"]);
    expect(issues({ password: "x".repeat(257) })).toEqual(["password"]);
    expect(issues({ username: "" })).toEqual(["username"]);
    expect(issues({ username: "a\nb" })).toEqual(["username"]);
    expect(issues({ ca_pem: "x", verify_tls: false })).toEqual(["ca_pem"]);
    expect(issues({ system_id: "a b" })).toEqual(["system_id"]);
    // nothing was stored by any of it
    expect(await findBmc(operatorPrincipal, id)).toBeNull();
  });

  it("is an operator's alone: tenants and agents are refused, and a node that does not exist is not found", async () => {
    const { nodes, cluster } = await registeredFleet(1);
    const id = nodes[0]!.node.id;
    await putBmc(operator, id, body());
    const tenant = await makeTenant();
    for (const p of [tenantAdminPrincipal(tenant.id), agentPrincipal(cluster.id, id)]) {
      expect(await errorOf(getBmcOrThrow(p, id))).toMatchObject({ code: "forbidden" });
      expect(await errorOf(putBmc(actorFor(p), id, body()))).toMatchObject({ code: "forbidden" });
      expect(await errorOf(powerNode(actorFor(p), id, "off"))).toMatchObject({ code: "forbidden" });
      expect(await errorOf(deleteBmc(actorFor(p), id))).toMatchObject({ code: "forbidden" });
    }
    expect(await errorOf(getBmcOrThrow(operatorPrincipal, "00000000-0000-4000-8000-000000000099"))).toMatchObject({ code: "not_found" });
    await deleteBmc(operator, id);
    expect(await errorOf(getBmcOrThrow(operatorPrincipal, id))).toMatchObject({ code: "not_found", message: "BMC not found" });
    expect(await errorOf(powerNode(operator, id, "off"))).toMatchObject({ code: "conflict", details: [{ path: "bmc" }] });
  });
});

describe("power through the BMC", () => {
  it("sends the ResetType the BMC lists, nothing when already there, and records the contact", async () => {
    const { nodes } = await registeredFleet(1);
    const id = nodes[0]!.node.id;
    await putBmc(operator, id, body());
    await sim.fault("clear");
    if (sim.state.power !== "On") sim.state.reset("On");
    expect(await powerNode(operator, id, "off")).toMatchObject({ action: "off", reset_type: "ForceOff", power_state_before: "On" });
    expect(sim.state.power).toBe("Off");
    expect(await powerNode(operator, id, "off")).toMatchObject({ reset_type: null, power_state_before: "Off" });
    // a restart of a powered-off system powers it on (BMCs refuse ForceRestart when off)
    expect(await powerNode(operator, id, "restart")).toMatchObject({ reset_type: "On", power_state_before: "Off" });
    expect(sim.state.power).toBe("On");
    const bmc = await getBmcOrThrow(operatorPrincipal, id);
    expect(bmc.last_contact_at).not.toBeNull();
    expect(bmc.last_error).toBeNull();
    expect(await db().auditLog.count({ where: { targetId: id, action: "node.power" } })).toBe(3);
    expect(sim.sessions()).toBe(0);
  });

  it("says how a BMC failed: credentials refused, unreachable; and keeps it on the BMC until a contact works", async () => {
    const { nodes } = await registeredFleet(1);
    const id = nodes[0]!.node.id;
    await putBmc(operator, id, body({ password: "wrong-password" }));
    expect(await errorOf(powerNode(operator, id, "on"))).toMatchObject({
      code: "bad_gateway",
      message: expect.stringMatching(/^BMC credentials refused/),
      details: [{ path: "bmc.password", message: "credentials_refused" }],
    });
    expect((await getBmcOrThrow(operatorPrincipal, id)).last_error).toMatchObject({ kind: "credentials_refused" });
    const gone = await startSimBmc({ hostname: "bmc-gone" });
    await gone.close();
    await putBmc(operator, id, body({ url: gone.url, password: "x" }));
    expect(await errorOf(powerNode(operator, id, "on"))).toMatchObject({
      code: "bad_gateway",
      details: [{ path: "bmc.url", message: "unreachable" }],
    });
    await putBmc(operator, id, body());
    await powerNode(operator, id, "on");
    expect((await getBmcOrThrow(operatorPrincipal, id)).last_error).toBeNull();
  }, 90_000);
});
