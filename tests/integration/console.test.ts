import { describe, expect, it } from "vitest";
import { enqueueNotifications } from "@/lib/alerts/notification-outbox";
import { listAlertGroups } from "@/lib/alerts/list-alerts";
import { alertListParams } from "@/lib/alerts/schemas";
import { createSilence, endSilence } from "@/lib/alerts/silences";
import { authenticateApiKey } from "@/lib/api-keys/authenticate-api-key";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { describeEntries } from "@/lib/audit/list-audit";
import { resolveActors } from "@/lib/audit/actor-names";
import { systemActor } from "@/lib/auth/principal";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { depositFunds } from "@/lib/billing/ledger";
import { balanceOutlook, jobCostSoFar } from "@/lib/billing/usage";
import { db, pool } from "@/lib/db/client";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { reconcileEndpoints } from "@/lib/endpoints/reconcile-endpoints";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { cancelJob } from "@/lib/jobs/cancel-job";
import { changeJobPriority } from "@/lib/jobs/change-job-priority";
import { jobsCsv, listJobsPage } from "@/lib/jobs/list-jobs";
import { jobListParams } from "@/lib/jobs/schemas";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { settingsView } from "@/lib/settings/settings";
import { updateSettings } from "@/lib/settings/update-settings";
import { createTenant } from "@/lib/tenants/create-tenant";
import {
  actorFor,
  agentPrincipal,
  inventory,
  makeCluster,
  makeUser,
  operatorPrincipal,
  tenantAdminPrincipal,
  tenantMemberPrincipal,
  unique,
  unreachableNodeAlerts,
} from "../support/fixtures";
import { codeOf } from "../support/outcomes";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { withSettingsLock } from "../support/settings-lock";

// The services behind the console's pages: lists, job rights and priorities, costs, alert groups
// and silences, names in the audit log, key expiry, invoices without zero lines, settings.

const operator = actorFor(operatorPrincipal);

/** A tenant with a GPU type of its own (priced), one node of it, and a member and an admin. */
async function world(quota = 16, mode: "invoice" | "prepaid" = "invoice") {
  const cluster = await makeCluster();
  const gpuType = unique("C").replace(/-/g, "").slice(0, 12).toUpperCase();
  await db().gpuRate.create({ data: { gpuType, centsPerHour: 360, effectiveFrom: new Date("2020-01-01"), createdBy: "test" } });
  const node = await registerNode(actorFor(agentPrincipal(cluster.id)), {
    hostname: unique("n"),
    capabilities: { containers: true, runtime: "docker test" },
    gpus: inventory(8, gpuType),
  });
  await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), node.node.id, {});
  const tenant = await createTenant(systemActor, { name: unique("tenant"), gpu_quota: quota, billing_email: null, billing_mode: mode });
  const member = await makeUser("tenant_member", tenant.id);
  const other = await makeUser("tenant_member", tenant.id);
  const admin = await makeUser("tenant_admin", tenant.id);
  const as = (u: { id: string; email: string }, role: "tenant_admin" | "tenant_member") =>
    actorFor({ kind: "tenant", tenantId: tenant.id, role, userId: u.id, label: u.email });
  return {
    cluster,
    node,
    gpuType,
    tenant,
    asMember: as(member, "tenant_member"),
    asOther: as(other, "tenant_member"),
    asAdmin: as(admin, "tenant_admin"),
    member,
    admin,
  };
}

describe("job lists", () => {
  it("filter by status, search and date, sort, page, count, and export the same rows as CSV", async () => {
    const w = await world(64);
    const names = ["alpha-train", "beta-train", "gamma-eval"];
    for (const name of names)
      await submitJob(w.asMember, {
        name,
        gpu_count: 1,
        gpu_type: w.gpuType,
        priority: 5,
        max_retries: 0,
        image: "nvcr.io/nvidia/pytorch:24.05-py3",
        command: "python train.py --lr=3e-4",
      });
    const p = tenantAdminPrincipal(w.tenant.id);
    const all = await listJobsPage(p, jobListParams.parse({ sort: "name" }));
    expect(all.total).toBe(3);
    expect(all.rows.map((r) => r.name)).toEqual(names);
    expect(all.rows[0]!.submitter?.email).toBe(w.member.email);
    expect((await listJobsPage(p, jobListParams.parse({ q: "TRAIN", sort: "name" }))).rows.map((r) => r.name)).toEqual([
      "alpha-train",
      "beta-train",
    ]);
    const page2 = await listJobsPage(p, jobListParams.parse({ sort: "name", per_page: 25, page: 2 }));
    expect(page2).toMatchObject({ total: 3, rows: [] });
    const today = new Date().toISOString().slice(0, 10);
    expect((await listJobsPage(p, jobListParams.parse({ from: today, to: today }))).total).toBe(3);
    expect((await listJobsPage(p, jobListParams.parse({ to: "2020-01-01" }))).total).toBe(0);
    // an operator's view of this tenant; the CSV holds exactly those rows (other files' scheduler
    // cycles may start these jobs meanwhile, so the view does not filter on status)
    const view = jobListParams.parse({ tenant_id: w.tenant.id, gpu_type: w.gpuType, q: "gamma" });
    expect((await listJobsPage(operator.principal, view)).total).toBe(1);
    const csv = (await jobsCsv(operator.principal, view)).trim().split("\r\n");
    expect(csv[0]).toBe(
      "id,name,tenant,status,gpu_count,gpu_type,priority,nodes,submitted_by,submitted_at,started_at,finished_at,image,command,pending_reason",
    );
    expect(csv).toHaveLength(2);
    expect(csv[1]).toContain(`gamma-eval,${w.tenant.name},`);
    expect(csv[1]).toContain(w.member.email);
    // a tenant's filter never reaches another tenant's jobs
    expect((await listJobsPage(tenantAdminPrincipal((await world()).tenant.id), jobListParams.parse({ q: "alpha" }))).total).toBe(0);
  });
});

describe("job rights, priority and cost", () => {
  it("members cancel their own jobs only; admins any; said in words", async () => {
    const w = await world(64);
    const mine = await submitJob(w.asMember, { name: unique("mine"), gpu_count: 1, gpu_type: w.gpuType, priority: 9, max_retries: 0 });
    const theirs = await submitJob(w.asOther, { name: unique("theirs"), gpu_count: 1, gpu_type: w.gpuType, priority: 9, max_retries: 0 });
    expect((await db().job.findUniqueOrThrow({ where: { id: mine.id } })).submittedBy).toBe(w.member.id);
    const refused = await cancelJob(w.asMember, theirs.id).catch((e: { code: string; message: string }) => e);
    expect(refused).toMatchObject({ code: "forbidden", message: expect.stringMatching(/only the jobs they submitted/) });
    expect((await cancelJob(w.asMember, mine.id)).status).toBe("cancelled");
    expect((await cancelJob(w.asAdmin, theirs.id)).status).toBe("cancelled");
    // a job submitted with a key has no owner: only admins may cancel it
    const byKey = await submitJob(
      actorFor({
        kind: "tenant",
        tenantId: w.tenant.id,
        role: "tenant_admin",
        keyId: "00000000-0000-4000-8000-000000000001",
        label: "key gf_x",
      }),
      { name: unique("bykey"), gpu_count: 1, gpu_type: w.gpuType, priority: 9, max_retries: 0 },
    );
    expect(await codeOf(cancelJob(actorFor(tenantMemberPrincipal(w.tenant.id, w.member.id)), byKey.id))).toBe("forbidden");
  });

  it("an operator reorders a waiting job: audited, in its timeline, refused once it runs", async () => {
    const w = await world(64);
    // the node takes no work until the test wants the job to run, so no other file's scheduling cycle starts it mid-test
    await changeNodeStatus(actorFor(operatorPrincipal), w.node.node.id, "maintenance");
    const job = await submitJob(w.asAdmin, {
      name: unique("prio"),
      gpu_count: 1,
      gpu_type: w.gpuType,
      priority: 7,
      max_retries: 0,
      cluster_id: w.cluster.id,
    });
    expect(await codeOf(changeJobPriority(w.asAdmin, job.id, 1))).toBe("forbidden");
    await pool().query(`UPDATE jobs SET status = 'blocked', block_reason = 'quota' WHERE id = $1`, [job.id]);
    expect(await changeJobPriority(actorFor({ kind: "operator", label: "ops@example.test" }), job.id, 2)).toEqual({
      name: job.name,
      from: 7,
      to: 2,
    });
    const events = await db().jobEvent.findMany({ where: { jobId: job.id }, orderBy: { id: "asc" } });
    expect(events.at(-1)).toMatchObject({
      fromStatus: "blocked",
      toStatus: "blocked",
      reason: "priority 7 → 2",
      actor: "ops@example.test",
    });
    expect(await db().auditLog.findFirst({ where: { action: "job.priority_changed", targetId: job.id } })).toMatchObject({
      details: expect.objectContaining({ from: 7, to: 2 }),
    });
    await pool().query(`UPDATE jobs SET status = 'queued', block_reason = NULL WHERE id = $1`, [job.id]);
    await changeNodeStatus(actorFor(operatorPrincipal), w.node.node.id, "available");
    await runSchedulerCycle("test");
    expect(await codeOf(changeJobPriority(operator, job.id, 3))).toBe("invalid_transition");
  });

  it("a job's cost so far: billed segments plus what its run has not been billed yet", async () => {
    const w = await world(64);
    const job = await submitJob(w.asAdmin, {
      name: unique("cost"),
      gpu_count: 2,
      gpu_type: w.gpuType,
      priority: 1,
      max_retries: 0,
      cluster_id: w.cluster.id,
    });
    await runSchedulerCycle("test");
    await pool().query(`UPDATE jobs SET started_at = now() - interval '100 seconds' WHERE id = $1`, [job.id]);
    const cost = await jobCostSoFar(job.id);
    // 2 GPUs × ~100 s at 360 cents per GPU-hour = ~20 cents, nothing billed yet
    expect(cost.billed_cents).toBe(0);
    expect(cost.running_cents).toBeGreaterThanOrEqual(20);
    expect(cost.running_cents).toBeLessThan(23);
    expect(cost.cents_per_hour).toBe(720);
  });
});

describe("billing outlook and invoices", () => {
  it("a prepaid tenant's balance runs out at its current spend; low under a day of it", async () => {
    const w = await world(64, "prepaid");
    await depositFunds(operator, w.tenant.id, 1_000, "wire");
    const job = await submitJob(w.asAdmin, {
      name: unique("spend"),
      gpu_count: 2,
      gpu_type: w.gpuType,
      priority: 1,
      max_retries: 0,
      cluster_id: w.cluster.id,
    });
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
    const o = await balanceOutlook(w.tenant.id);
    expect(o).toMatchObject({ balance_cents: 1_000, spend_cents_per_hour: 720, level: "low" });
    const hours = (Date.parse(o.zero_at!) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(1.3);
    expect(hours).toBeLessThan(1.4);
  });

  it("leaves zero-hour, zero-cost lines off an invoice (their usage is still settled)", async () => {
    const w = await world(64);
    const [a, b] = await Promise.all(
      [1, 2].map(() => submitJob(w.asAdmin, { name: unique("inv"), gpu_count: 1, gpu_type: w.gpuType, priority: 9, max_retries: 0 })),
    );
    const end = new Date(Date.now() - 3_600_000);
    const start = new Date(end.getTime() - 3_600_000);
    await pool().query(
      `INSERT INTO usage_events (tenant_id, job_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
       VALUES ($1, $2, 1, 'final', 'invoice', $4, 1, $5, $6, 3600, 360, 360), ($1, $3, 1, 'final', 'invoice', $4, 1, $6::timestamptz - interval '1 second', $6, 1, 360, 0)`,
      [w.tenant.id, a!.id, b!.id, w.gpuType, start, end],
    );
    const inv = await generateInvoice(operator, w.tenant.id, {
      period_start: new Date(start.getTime() - 1).toISOString(),
      period_end: end.toISOString(),
    });
    expect(inv.lines.map((l) => l.jobId)).toEqual([a!.id]);
    expect(await db().usageEvent.count({ where: { jobId: b!.id, invoiceId: inv.id } })).toBe(1);
  });
});

describe("alerts: groups and silences", () => {
  const events = (n: number) => unreachableNodeAlerts(n, { subject: unique("node"), ruleName: unique("rule"), notify: true });

  it("repeats of one rule about one subject are one row with its count; every alert on request", async () => {
    const { subject } = await events(15);
    const grouped = await listAlertGroups(operator.principal, alertListParams.parse({ q: subject }));
    expect(grouped.total).toBe(1);
    expect(grouped.groups[0]).toMatchObject({ count: 15, firing: 1, latest: expect.objectContaining({ status: "firing" }) });
    expect(grouped.groups[0]!.occurrences).toHaveLength(15);
    const each = await listAlertGroups(operator.principal, alertListParams.parse({ q: subject, group: "0", per_page: 25 }));
    expect(each.total).toBe(15);
    expect((await listAlertGroups(operator.principal, alertListParams.parse({ q: subject, status: "resolved", group: "0" }))).total).toBe(
      14,
    );
  });

  it("a silence keeps its alerts out of the outbox while it lasts, and shows on the list", async () => {
    const { cluster, rule, subject } = await events(1);
    const event = await db().alertEvent.findFirstOrThrow({ where: { ruleId: rule.id } });
    // no channel: the row is recorded for the console at once, so nothing joins the shared outbox's deliveries
    const cfg = { emailFrom: "a@b.c", emailTo: [], publicUrl: "http://x" };
    const s = await createSilence(operator, { kind: "maintenance", cluster_id: cluster.id, reason: "rack firmware", duration_s: 3600 });
    expect(await enqueueNotifications([event.id], "firing", cfg)).toBe(0);
    const listed = await listAlertGroups(operator.principal, alertListParams.parse({ q: subject }));
    expect(listed.groups[0]!.silence).toMatchObject({ id: s.id, reason: "rack firmware" });
    await endSilence(operator, s.id);
    expect(await enqueueNotifications([event.id], "firing", cfg)).toBe(1);
    expect(
      await db().auditLog.count({ where: { targetId: s.id, action: { in: ["alert.maintenance_created", "alert.maintenance_ended"] } } }),
    ).toBe(2);
    // never a silence of everything, nor a window without a place
    expect(await codeOf(createSilence(operator, { kind: "silence", reason: "all quiet", duration_s: 60 }))).toBe("validation_failed");
    // a type no alert has would silence nothing: refused, naming the field, writing nothing
    const before = await db().alertSilence.count();
    const typo = await createSilence(operator, { kind: "silence", rule_type: "gpu_xidd", reason: "typo", duration_s: 60 } as never).catch(
      (e: unknown) => e,
    );
    expect(typo).toMatchObject({ code: "validation_failed", details: [{ path: "rule_type" }] });
    expect(await db().alertSilence.count()).toBe(before);
    // the platform's own types are silenceable too
    const degraded = await createSilence(operator, { kind: "silence", rule_type: "reservation_degraded", reason: "known", duration_s: 60 });
    await endSilence(operator, degraded.id);
  });
});

describe("names instead of prefixes", () => {
  it("audit entries and timelines name the user or the key that acted, and the object", async () => {
    const w = await world();
    const { apiKey, key } = await createApiKey(operator, { name: "ci-pipeline", scope: "tenant", tenant_id: w.tenant.id });
    const principal = await authenticateApiKey(key);
    const job = await submitJob(actorFor(principal), {
      name: unique("named"),
      gpu_count: 1,
      gpu_type: w.gpuType,
      priority: 9,
      max_retries: 0,
    });
    const entry = await db().auditLog.findFirstOrThrow({ where: { action: "job.submitted", targetId: job.id } });
    const [described] = await describeEntries([entry]);
    expect(described).toMatchObject({ actorName: "key “ci-pipeline”", actorDetail: `${apiKey.prefix}…`, targetName: job.name });
    const byLabel = (await resolveActors({ labels: [`key ${apiKey.prefix}…`, w.member.email, "scheduler"] })).byLabel;
    expect(byLabel.get(`key ${apiKey.prefix}…`)?.name).toBe("key “ci-pipeline”");
    expect(byLabel.get(w.member.email)?.name).toBe("tenant_member");
    expect(byLabel.has("scheduler")).toBe(false);
  });
});

describe("API key expiry", () => {
  it("an expired key authenticates nothing; an expiry must lie ahead", async () => {
    const w = await world();
    const soon = new Date(Date.now() + 86_400_000).toISOString();
    const { apiKey, key } = await createApiKey(operator, {
      name: unique("exp"),
      scope: "tenant",
      tenant_id: w.tenant.id,
      expires_at: soon,
    });
    expect(apiKey.expiresAt?.toISOString()).toBe(soon);
    expect((await authenticateApiKey(key)).kind).toBe("tenant");
    await pool().query(
      `UPDATE api_keys SET created_at = now() - interval '2 days', expires_at = now() - interval '1 second' WHERE id = $1`,
      [apiKey.id],
    );
    expect(await authenticateApiKey(key).catch((e: { code: string; message: string }) => `${e.code}: ${e.message}`)).toBe(
      "unauthorized: API key expired",
    );
    expect(
      await codeOf(
        createApiKey(operator, { name: unique("past"), scope: "tenant", tenant_id: w.tenant.id, expires_at: "2020-01-01T00:00:00Z" }),
      ),
    ).toBe("validation_failed");
  });
});

describe("settings", () => {
  it("bank details are stored over nothing, shown back, audited and removable", () =>
    withSettingsLock(async () => {
      const actor = actorFor({ kind: "operator", label: "ops@example.test" });
      await updateSettings(actor, { "billing.bank_details": { account_name: "GPUForge Cloud Ltd", iban: "DE89 3704 0044 0532 0130 00" } });
      expect((await settingsView()).bank).toMatchObject({ source: "console", value: { account_name: "GPUForge Cloud Ltd" } });
      expect(
        await db().auditLog.findFirst({ where: { action: "settings.updated", targetId: "billing" }, orderBy: { id: "desc" } }),
      ).toMatchObject({ details: expect.objectContaining({ by: "ops@example.test" }) });
      await updateSettings(actor, { "billing.bank_details": null });
      expect((await settingsView()).bank).toEqual({ source: "none", value: null });
      expect(await codeOf(updateSettings(actorFor(tenantAdminPrincipal(unique("t"))), { "billing.bank_details": null }))).toBe("forbidden");
    }));
});

describe("SLA observations", () => {
  it("every reconciler pass records what it saw of each endpoint in the minute", async () => {
    const w = await world(16);
    const e = await createEndpoint(w.asAdmin, {
      name: unique("obs"),
      model: "m",
      gpu_type: w.gpuType,
      gpus_per_replica: 1,
      replicas: 1,
      cluster_id: w.cluster.id,
      autoscale_metric: "none",
      cooldown_s: 300,
    });
    await reconcileEndpoints({ endpointId: e.id });
    await reconcileEndpoints({ endpointId: e.id });
    const rows = await db().endpointObservationMinute.findMany({ where: { endpointId: e.id } });
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.reduce((n, r) => n + r.observations, 0)).toBeGreaterThanOrEqual(3);
    expect(rows[0]).toMatchObject({ minReady: 0, maxReady: 0, desired: 1 });
  });
});
