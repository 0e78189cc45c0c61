import { spawnSync } from "node:child_process";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueNotifications, deliverNotifications } from "@/lib/alerts/notification-outbox";
import { db } from "@/lib/db/client";
import { redactPendingReasons } from "@/lib/jobs/queries";
import { analyticsSalt, createDemoRequest } from "@/lib/marketing/site";
import { createIngestServer } from "../../scripts/ingest-server";
import { makeTenant, unique } from "../support/fixtures";
import { takeOutboxTurn } from "../support/test-turns";

describe("the ingest server authenticates before it reads a body and bounds every connection", () => {
  let server: ReturnType<typeof createIngestServer>;
  let port = 0;
  beforeAll(async () => {
    server = createIngestServer("http://127.0.0.1", {
      headersTimeoutMs: 400,
      requestTimeoutMs: 1_500,
      keepAliveTimeoutMs: 1_000,
      idleTimeoutMs: 3_000,
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** Declares a large body, sends one small piece of it, and waits for the answer. */
  const partialUpload = (authorization?: string) =>
    new Promise<{ status: number; afterMs: number }>((resolve, reject) => {
      const started = Date.now();
      const req = http.request({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/api/clusters/metrics",
        headers: { "content-type": "application/json", "content-length": 4 * 1024 * 1024, ...(authorization ? { authorization } : {}) },
      });
      req.on("response", (res) => {
        res.resume();
        resolve({ status: res.statusCode!, afterMs: Date.now() - started });
        req.destroy();
      });
      req.on("error", reject);
      req.write('{"metrics": [');
    });

  it("answers 401 to a caller without a valid key while its body is still on the way", async () => {
    expect(await partialUpload()).toMatchObject({ status: 401 });
    expect(await partialUpload(`Bearer gf_${"x".repeat(43)}`)).toMatchObject({ status: 401 });
  });

  it("drops a client that never finishes its request head", async () => {
    const closedAfter = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = net.connect(port, "127.0.0.1", () => socket.write("POST /api/clusters/metrics HTTP/1.1\r\nHost: x\r\n"));
      socket.on("data", () => {});
      socket.on("close", () => resolve(Date.now() - started));
      socket.on("error", () => {});
    });
    expect(closedAfter).toBeLessThan(3_000);
  });

  it("answers an address that keeps failing to authenticate with 429, without asking the database", async () => {
    const spoofed = { "x-forwarded-for": "203.0.113.77" }; // not trusted: the socket address counts
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await fetch(`http://127.0.0.1:${port}/api/clusters/metrics`, {
        method: "POST",
        headers: { ...spoofed, authorization: `Bearer gf_${String(i).padStart(43, "y")}`, "content-type": "application/json" },
        body: "{}",
      });
      statuses.push(r.status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe("chat webhooks receive escaped text", () => {
  // the outbox is one queue for the whole database: this file's delivery takes its turn with the others'
  let releaseOutbox: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    releaseOutbox = await takeOutboxTurn();
  }, 600_000);
  afterAll(async () => {
    await releaseOutbox?.();
  });
  it("a job name or a demo request cannot ping the channel or disguise a link", async () => {
    const received: Array<{ text: string; gpuforge: Record<string, unknown> }> = [];
    const hook = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push(JSON.parse(body));
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
    const cfg = {
      emailFrom: "x@test",
      emailTo: [],
      webhookUrl: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
      publicUrl: "http://site.test",
    };
    try {
      const t = await makeTenant();
      const alert = await db().alertEvent.create({
        data: {
          ruleType: "job_moved",
          dedupeKey: unique("chat"),
          subjectType: "job",
          subjectId: unique("job"),
          subjectLabel: "<!channel> urgent",
          tenantId: t.id,
          severity: "warning",
          message: "Job <https://evil.example|Click to fix> was moved\nDetails: https://evil.example",
        },
      });
      await enqueueNotifications([alert.id], "firing", cfg);
      const demo = await createDemoRequest(
        {
          name: "<!here> Mallory",
          email: `${unique("m")}@example.test`,
          message: "hi\n<https://evil.example|Inbox: http://site.test/admin>",
        },
        cfg,
      );
      await deliverNotifications(cfg, 500);
      const mine = received.filter((r) => r.gpuforge.alert_id === alert.id || r.gpuforge.demo_request_id === demo.id);
      expect(mine).toHaveLength(2);
      for (const m of mine) {
        expect(m.text).not.toMatch(/<!|<https?:/);
        expect(m.text).toMatch(/&lt;(!channel|!here)&gt;/);
      }
      // a user's line break cannot start a line of ours
      expect(
        mine
          .find((m) => m.gpuforge.alert_id)!
          .text.split("\n")
          .filter((l) => l.startsWith("Details:")),
      ).toHaveLength(1);
    } finally {
      hook.close();
    }
  });
});

describe("tenants read no other tenant's job ids in a pending reason", () => {
  it("a reference to another organisation's job is redacted, one to their own kept", async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    const [ownJob] = await db().$queryRaw<Array<{ id: string }>>`
      INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, status) VALUES (${a.id}::uuid, 'mine', 1, 'X', 'queued') RETURNING id::text`;
    const [theirs] = await db().$queryRaw<Array<{ id: string }>>`
      INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, status) VALUES (${b.id}::uuid, 'theirs', 1, 'X', 'queued') RETURNING id::text`;
    const rows = [
      { pendingReason: `Waiting behind job ${theirs!.id.slice(0, 8)} (priority 1): starting now would delay it` },
      { pendingReason: `Needs 1 free X GPUs; 0 free, and waiting behind job ${ownJob!.id.slice(0, 8)} (priority 5)` },
      { pendingReason: null },
    ];
    const seen = await redactPendingReasons(a.id, rows);
    expect(seen[0]!.pendingReason).toBe("Waiting behind another organisation's job (priority 1): starting now would delay it");
    expect(seen[1]!.pendingReason).toContain(`job ${ownJob!.id.slice(0, 8)}`);
    expect(seen[2]!.pendingReason).toBeNull();
  });
});

describe("secrets and configuration", () => {
  it("the analytics salt is configuration, never a constant and never the session secret itself", () => {
    const salt = analyticsSalt();
    expect(salt).toMatch(/^[0-9a-f]{64}$/);
    expect(salt).not.toBe(process.env.NEXTAUTH_SECRET);
    expect(salt).not.toContain("gpuforge-analytics");
  });

  it("the app server refuses to start without NEXTAUTH_SECRET, and says which variable", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production" };
    delete env.NEXTAUTH_SECRET;
    const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/serve.ts", "-p", "0", "-H", "127.0.0.1"], {
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain("refusing to start");
    expect(r.stderr).toContain("NEXTAUTH_SECRET");
  });

  it("the app server refuses to start in production without its public address or the nodes' networks, naming each", () => {
    const serve = (extra: Record<string, string>) => {
      const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production", ...extra };
      for (const k of ["NEXTAUTH_URL", "NODE_ADDRESS_NETWORKS"]) if (!(k in extra)) delete env[k];
      return spawnSync(process.execPath, ["--import", "tsx", "scripts/serve.ts", "-p", "0", "-H", "127.0.0.1"], {
        env,
        encoding: "utf8",
        timeout: 60_000,
      });
    };
    const noUrl = serve({ NODE_ADDRESS_NETWORKS: "10.0.0.0/8" });
    expect(noUrl.status).toBe(78);
    expect(noUrl.stderr).toMatch(/refusing to start[\s\S]*NEXTAUTH_URL: must be set in production/);
    const noNetworks = serve({ NEXTAUTH_URL: "https://cp.example" });
    expect(noNetworks.status).toBe(78);
    expect(noNetworks.stderr).toMatch(/NODE_ADDRESS_NETWORKS: must be set in production/);
  });
});
