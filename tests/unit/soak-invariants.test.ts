import { describe, expect, it } from "vitest";
import {
  ALERT_GRACE_MS,
  checkAll,
  checkBackgroundFailures,
  checkSnapshot,
  FAILING_FOR_MS,
  FAILURE_BUCKET_MS,
  INVARIANTS,
  noteBackgroundFailure,
  type BackgroundFailures,
  OVERDUE_GRACE_MS,
  TX_SKEW_MS,
  type Harness,
  type Invariant,
  type WorldRows,
} from "@/scripts/soak/invariants";
import { chaosSchedule, CHAOS_KINDS } from "@/scripts/soak/chaos";
import { seededRandom } from "@/scripts/lib/stats";

// A small consistent world: one tenant, one node with two GPUs, a job that ran and completed on
// one GPU (billed in two segments, invoiced), a job running on the other, a replica that ran and
// stopped on the first GPU afterwards. Each test breaks one thing and expects exactly its invariant.
const T0 = Date.parse("2026-11-30T12:00:00.000Z");
const s = (n: number) => T0 + n * 1000;

function world(): WorldRows {
  return {
    now: s(600),
    nodes: [
      {
        id: "n1",
        hostname: "node-1",
        status: "available",
        last_heartbeat_at: s(595),
        attested: true,
        wipe_timeout_s: 300,
        attestation_timeout_s: 300,
        status_since: null,
      },
    ],
    nodeEvents: [{ node_id: "n1", from_status: "registered", to_status: "available", at: s(0) }],
    gpus: [
      {
        id: "g1",
        node_id: "n1",
        status: "available",
        unhealthy_reason: null,
        last_xid: null,
        last_xid_at: null,
        allocated_job_id: null,
        allocated_replica_id: null,
      },
      {
        id: "g2",
        node_id: "n1",
        status: "available",
        unhealthy_reason: null,
        last_xid: null,
        last_xid_at: null,
        allocated_job_id: "j2",
        allocated_replica_id: null,
      },
    ],
    tenants: [{ id: "t1", name: "acme", gpu_quota: 2 }],
    jobs: [
      {
        id: "j1",
        tenant_id: "t1",
        status: "completed",
        duration_s: 100,
        submitted_at: s(9),
        pending_reason: null,
        block_reason: null,
        last_event: { to_status: "completed", reason: "completed (exit 0)", at: s(110) },
      },
      {
        id: "j2",
        tenant_id: "t1",
        status: "running",
        duration_s: 500,
        submitted_at: s(19),
        pending_reason: null,
        block_reason: null,
        last_event: { to_status: "running", reason: "placed on 1 node", at: s(20) },
      },
    ],
    placements: [
      {
        job_id: "j1",
        attempt: 1,
        fence: "f1",
        gpu_ids: ["g1"],
        node_ids: ["n1"],
        started_at: s(10),
        ended_at: s(110),
        end_status: "completed",
        reservation_id: null,
      },
      {
        job_id: "j2",
        attempt: 1,
        fence: "f2",
        gpu_ids: ["g2"],
        node_ids: ["n1"],
        started_at: s(20),
        ended_at: null,
        end_status: null,
        reservation_id: null,
      },
    ],
    replicas: [
      {
        id: "r1",
        tenant_id: "t1",
        node_id: "n1",
        status: "stopped",
        gpu_ids: ["g1"],
        started_at: s(200),
        stopped_at: s(300),
        reservation_id: null,
      },
    ],
    holdings: [],
    usage: [
      {
        id: "u1",
        job_id: "j1",
        replica_id: null,
        reservation_node_id: null,
        attempt: 1,
        kind: "accrual",
        settlement: "invoice",
        gpu_count: 1,
        started_at: s(10),
        ended_at: s(60),
        amount_cents: 4,
        ledger_cents: null,
      },
      {
        id: "u2",
        job_id: "j1",
        replica_id: null,
        reservation_node_id: null,
        attempt: 1,
        kind: "final",
        settlement: "invoice",
        gpu_count: 1,
        started_at: s(60),
        ended_at: s(110),
        amount_cents: 4,
        ledger_cents: null,
      },
      {
        id: "u3",
        job_id: "j2",
        replica_id: null,
        reservation_node_id: null,
        attempt: 1,
        kind: "accrual",
        settlement: "invoice",
        gpu_count: 1,
        started_at: s(20),
        ended_at: s(500),
        amount_cents: 40,
        ledger_cents: null,
      },
      {
        id: "u4",
        job_id: null,
        replica_id: "r1",
        reservation_node_id: null,
        attempt: 1,
        kind: "final",
        settlement: "prepaid",
        gpu_count: 1,
        started_at: s(200),
        ended_at: s(300),
        amount_cents: 8,
        ledger_cents: -8,
      },
    ],
    invoices: [{ id: "i1", number: 1, amount_cents: 8, lines_cents: 8, usage_cents: 8 }],
    remediations: [],
    firingAlerts: [],
    hotMinutes: [],
    verdicts: [],
  };
}

const harness = (over: Partial<Harness> = {}): Harness => ({
  submittedJobIds: ["j1", "j2"],
  reports: [{ job_id: "j1", attempt: 1, fence: "f1", status: "completed", outcome: "accepted", at: s(110) }],
  remediationCap: 2,
  remediationWindowS: 600,
  implants: [],
  ...over,
});

function only(w: WorldRows, h = harness()): Invariant[] {
  return [...new Set(checkAll(w, h).map((x) => x.invariant))];
}

describe("the soak's invariant checker", () => {
  it("finds nothing wrong in a consistent world", () => {
    expect(checkAll(world(), harness())).toEqual([]);
  });

  it("names every invariant the issue lists", () => {
    expect(INVARIANTS).toEqual(
      expect.arrayContaining([
        "gpu_held_twice",
        "placement_on_unavailable_hardware",
        "quota_exceeded",
        "run_not_billed_exactly_once",
        "invoice_not_equal_to_lines",
        "quarantine_beyond_cap",
        "stale_report_applied",
        "lost_job",
        "alert_not_resolved",
      ]),
    );
  });

  it("a GPU held by a job and a replica at once, or by two overlapping holdings", () => {
    const both = world();
    both.gpus[1]!.allocated_replica_id = "r9";
    expect(only(both)).toEqual(["gpu_held_twice"]);
    const overlap = world();
    overlap.replicas[0]!.started_at = s(100);
    overlap.usage[3]!.started_at = s(100);
    expect(only(overlap)).toEqual(["gpu_held_twice"]);
  });

  it("work placed on a quarantined node or a GPU with a fatal XID, or left running on a node out of service", () => {
    const quarantined = world();
    quarantined.nodeEvents.push(
      { node_id: "n1", from_status: "available", to_status: "quarantined", at: s(5) },
      { node_id: "n1", from_status: "quarantined", to_status: "available", at: s(150) },
    );
    expect(only(quarantined)).toEqual(["placement_on_unavailable_hardware"]);
    const badGpu = world();
    Object.assign(badGpu.gpus[1]!, { last_xid: 79, last_xid_at: s(15) });
    expect(only(badGpu)).toEqual(["placement_on_unavailable_hardware"]);
    // within the transaction-time skew, or a benign XID: not a violation
    Object.assign(badGpu.gpus[1]!, { last_xid: 79, last_xid_at: s(20) - TX_SKEW_MS / 2 });
    expect(only(badGpu)).toEqual([]);
    Object.assign(badGpu.gpus[1]!, { last_xid: 13, last_xid_at: s(15) });
    expect(only(badGpu)).toEqual([]);
    const stillRunning = world();
    stillRunning.nodes[0]!.status = "offline";
    expect(checkSnapshot(stillRunning).map((x) => x.invariant)).toEqual(["placement_on_unavailable_hardware"]);
    // a handover's release step stops the work of a node in `releasing`: a run open there is due
    // only a while after the node entered it, and never in the handover's later states
    const releasing = world();
    Object.assign(releasing.nodes[0]!, { status: "releasing", status_since: releasing.now - 1_000 });
    expect(checkSnapshot(releasing)).toEqual([]);
    releasing.nodes[0]!.status_since = releasing.now - 61_000;
    expect(checkSnapshot(releasing).map((x) => x.detail)).toEqual([expect.stringContaining("which is releasing")]);
    Object.assign(releasing.nodes[0]!, { status: "wiping", status_since: releasing.now - 1_000 });
    expect(checkSnapshot(releasing).map((x) => x.detail)).toEqual([expect.stringContaining("which is wiping")]);
  });

  it("a tenant over its quota", () => {
    const w = world();
    w.gpus[0]!.allocated_job_id = "j2";
    w.tenants[0]!.gpu_quota = 1;
    expect(checkSnapshot(w).map((x) => x.invariant)).toEqual(["quota_exceeded"]);
  });

  it("with reservations: work inside does not count against the quota, reserved GPUs do, and on-demand work alone must fit", () => {
    // t1 holds node n2 (8 GPUs) from s(100); its job j3 runs inside on one of them
    const w = world();
    w.now = s(150);
    w.tenants[0]!.gpu_quota = 8;
    w.holdings = [
      {
        id: "h1",
        reservation_id: "res1",
        tenant_id: "t1",
        node_id: "n2",
        gpu_count: 8,
        starts_at: s(100),
        ends_at: s(400),
        live: true,
        closed_at: null,
      },
    ];
    w.gpus.push({
      id: "g3",
      node_id: "n2",
      status: "available",
      unhealthy_reason: null,
      last_xid: null,
      last_xid_at: null,
      allocated_job_id: "j3",
      allocated_replica_id: null,
    });
    w.jobs.push({
      id: "j3",
      tenant_id: "t1",
      status: "running",
      duration_s: 200,
      submitted_at: s(110),
      pending_reason: null,
      block_reason: null,
      last_event: { to_status: "running", reason: "placed on 1 node", at: s(120) },
    });
    w.placements.push({
      job_id: "j3",
      attempt: 1,
      fence: "f3",
      gpu_ids: ["g3"],
      node_ids: ["n2"],
      started_at: s(120),
      ended_at: null,
      end_status: null,
      reservation_id: "res1",
    });
    // j2 on demand (1 GPU) beside 8 reserved: over by the reservation's start, which evicts nothing
    expect(checkSnapshot(w)).toEqual([]);
    w.tenants[0]!.gpu_quota = 7;
    expect(checkSnapshot(w).map((x) => x.detail)).toEqual(["its active reservations hold 8 GPUs, quota 7"]);
    // j3 on demand after all: two GPUs on demand against a quota of one
    w.placements.at(-1)!.reservation_id = null;
    w.holdings = [];
    w.tenants[0]!.gpu_quota = 1;
    expect(checkSnapshot(w).map((x) => x.detail)).toEqual(["holds 2 GPUs on demand, quota 1"]);
  });

  it("work of another tenant placed on a node its reservation held at that moment", () => {
    const w = world();
    w.tenants.push({ id: "t2", name: "rival", gpu_quota: 8 });
    w.holdings = [
      {
        id: "h1",
        reservation_id: "res1",
        tenant_id: "t2",
        node_id: "n1",
        gpu_count: 2,
        starts_at: s(15),
        ends_at: s(1000),
        live: true,
        closed_at: s(18),
      },
    ];
    // released at s(18), before j2 started at s(20): nothing held it then
    expect(only(w).filter((x) => x === "placement_on_unavailable_hardware")).toEqual([]);
    w.holdings[0]!.closed_at = null;
    expect(
      checkAll(w, harness())
        .filter((x) => x.invariant === "placement_on_unavailable_hardware")
        .map((x) => x.subject),
    ).toEqual(["job j2 attempt 1", "replica r1"]);
  });

  it("a node a reservation held billed past its window, twice at the end, or at all when it never held anything", () => {
    const held = () => {
      const w = world();
      w.holdings = [
        {
          id: "h1",
          reservation_id: "res1",
          tenant_id: "t1",
          node_id: "n2",
          gpu_count: 8,
          starts_at: s(100),
          ends_at: s(250),
          live: true,
          closed_at: s(250),
        },
      ];
      w.usage.push(
        {
          id: "u5",
          job_id: null,
          replica_id: null,
          reservation_node_id: "h1",
          attempt: 1,
          kind: "accrual",
          settlement: "invoice",
          gpu_count: 8,
          started_at: s(100),
          ended_at: s(200),
          amount_cents: 40,
          ledger_cents: null,
        },
        {
          id: "u6",
          job_id: null,
          replica_id: null,
          reservation_node_id: "h1",
          attempt: 1,
          kind: "final",
          settlement: "invoice",
          gpu_count: 8,
          started_at: s(200),
          ended_at: s(250),
          amount_cents: 20,
          ledger_cents: null,
        },
      );
      return w;
    };
    expect(checkAll(held(), harness())).toEqual([]);
    const past = held();
    past.usage[5]!.ended_at = s(251);
    expect(only(past)).toEqual(["run_not_billed_exactly_once"]);
    const open = held();
    open.holdings[0]!.closed_at = null;
    expect(only(open)).toEqual(["run_not_billed_exactly_once"]);
    const cancelled = held();
    cancelled.holdings[0]!.live = false;
    expect(only(cancelled)).toEqual(["run_not_billed_exactly_once"]);
  });

  it("a run billed with a gap, an overlap, twice at the end, or not charged to a prepaid balance", () => {
    const gap = world();
    gap.usage[1]!.started_at = s(61);
    expect(only(gap)).toEqual(["run_not_billed_exactly_once"]);
    const overlap = world();
    overlap.usage[1]!.started_at = s(59);
    expect(only(overlap)).toEqual(["run_not_billed_exactly_once"]);
    const twoFinals = world();
    twoFinals.usage[0]!.kind = "final";
    expect(only(twoFinals)).toEqual(["run_not_billed_exactly_once"]);
    const unbilled = world();
    unbilled.usage = unbilled.usage.filter((u) => u.job_id !== "j1");
    unbilled.invoices = [];
    expect(only(unbilled)).toEqual(["run_not_billed_exactly_once"]);
    const uncharged = world();
    uncharged.usage[3]!.ledger_cents = null;
    expect(only(uncharged)).toEqual(["run_not_billed_exactly_once"]);
  });

  it("an invoice whose total is not the sum of its lines", () => {
    const w = world();
    w.invoices[0]!.lines_cents = 7;
    expect(only(w)).toEqual(["invoice_not_equal_to_lines"]);
  });

  it("more automatic quarantines in a window than the cap", () => {
    const w = world();
    w.remediations = [10, 20, 30].map((t) => ({ node_id: `n${t}`, cause: "fatal_xid:79", outcome: "quarantined", at: s(t) }));
    expect(only(w)).toEqual(["quarantine_beyond_cap"]);
    w.remediations[2]!.outcome = "capped";
    expect(only(w)).toEqual([]);
  });

  it("a stale report that was applied, and a current one refused as stale", () => {
    const applied = harness({
      reports: [{ job_id: "j1", attempt: 1, fence: "f-old", status: "completed", outcome: "accepted", at: s(110) }],
    });
    expect(only(world(), applied)).toEqual(["stale_report_applied"]);
    const wrongEnd = world();
    wrongEnd.placements[0]!.end_status = "queued";
    expect(only(wrongEnd)).toEqual(["stale_report_applied"]);
    const refusedCurrent = harness({
      reports: [
        { job_id: "j2", attempt: 1, fence: "f2", status: "completed", outcome: "stale", http: 409, code: "stale_report", at: s(520) },
      ],
    });
    expect(only(world(), refusedCurrent)).toEqual(["lost_job"]);
    const staleIndeed = harness({
      reports: [
        { job_id: "j1", attempt: 1, fence: "f1", status: "completed", outcome: "stale", http: 409, code: "stale_report", at: s(400) },
      ],
    });
    expect(only(world(), staleIndeed)).toEqual([]);
  });

  it("a job gone missing, finished without a reason, or running long past its end", () => {
    expect(only(world(), harness({ submittedJobIds: ["j1", "j2", "j3"] }))).toEqual(["lost_job"]);
    const noReason = world();
    noReason.jobs[0]!.last_event = { to_status: "running", reason: "placed", at: s(10) };
    expect(only(noReason)).toEqual(["lost_job"]);
    const overdue = world();
    overdue.now = s(20 + 500) + OVERDUE_GRACE_MS + 1_000;
    overdue.nodes[0]!.last_heartbeat_at = overdue.now;
    expect(only(overdue)).toEqual(["lost_job"]);
  });

  it("an alert still firing well after its cause cleared, but not one whose cause holds", () => {
    const w = world();
    w.nodeEvents.push(
      { node_id: "n1", from_status: "available", to_status: "offline", at: s(400) },
      { node_id: "n1", from_status: "offline", to_status: "available", at: s(500) },
    );
    w.firingAlerts = [
      { id: "a1", rule_type: "node_unreachable", subject_id: "n1", node_id: "n1", fired_at: s(450), window_s: 45, occurrences: 1 },
    ];
    expect(only(w)).toEqual(["alert_not_resolved"]);
    w.now = s(500) + ALERT_GRACE_MS - 1_000;
    w.nodes[0]!.last_heartbeat_at = w.now;
    expect(only(w)).toEqual([]);
    const hot = world();
    hot.firingAlerts = [
      { id: "a2", rule_type: "gpu_temperature", subject_id: "g1", node_id: "n1", fired_at: s(240), window_s: 300, occurrences: 2 },
    ];
    hot.hotMinutes = [{ gpu_id: "g1", buckets: [s(120), s(180)] }];
    hot.now = s(180) + 60_000 + 300_000 + ALERT_GRACE_MS + 1_000;
    hot.nodes[0]!.last_heartbeat_at = hot.now;
    hot.jobs[1]!.duration_s = null;
    expect(only(hot)).toEqual(["alert_not_resolved"]);
    hot.hotMinutes = [{ gpu_id: "g1", buckets: [s(120), hot.now - 120_000, hot.now - 60_000] }];
    expect(only(hot)).toEqual([]);
  });

  it("a background job failing run after run for a minute, but not one failing now and then", () => {
    const failures = new Map<string, BackgroundFailures>();
    // a scheduling cycle failing every 3 s for just under the limit, then again after a pause
    for (let t = 0; t < FAILING_FOR_MS - FAILURE_BUCKET_MS; t += 3_000) noteBackgroundFailure(failures, "scheduler-cycle", s(t / 1000));
    for (let t = FAILING_FOR_MS + FAILURE_BUCKET_MS; t < FAILING_FOR_MS * 2; t += 3_000)
      noteBackgroundFailure(failures, "scheduler-cycle", s(t / 1000));
    noteBackgroundFailure(failures, "billing-meter", s(5));
    expect(checkBackgroundFailures(failures)).toEqual([]);
    for (let t = 0; t < FAILING_FOR_MS * 3; t += 3_000) noteBackgroundFailure(failures, "scheduler-cycle", s(t / 1000));
    expect(checkBackgroundFailures(failures).map((x) => [x.invariant, x.subject])).toEqual([["background_job_failing", "scheduler-cycle"]]);
  });

  it("a benign XID that took a GPU out of service", () => {
    const w = world();
    w.gpus[0]!.unhealthy_reason = "fatal_xid:13";
    expect(only(w)).toEqual(["benign_xid_quarantined"]);
  });
});

describe("the soak's handover invariants", () => {
  /** The base world and a second node, n2, idle, in service since s(0): the one handed over. */
  function withIdleNode(): WorldRows {
    const w = world();
    w.nodes.push({ ...w.nodes[0]!, id: "n2", hostname: "node-2" });
    w.nodeEvents.push({ node_id: "n2", from_status: "registered", to_status: "available", at: s(0) });
    return w;
  }
  /** The world with node n2 handed over from s(120): released, wiped, inspected; passing at s(150) and back at s(151). */
  function handedOver(): WorldRows {
    const w = withIdleNode();
    w.nodeEvents.push(
      { node_id: "n2", from_status: "available", to_status: "releasing", at: s(120) },
      { node_id: "n2", from_status: "releasing", to_status: "wiping", at: s(121) },
      { node_id: "n2", from_status: "wiping", to_status: "inspecting", at: s(130) },
      { node_id: "n2", from_status: "inspecting", to_status: "available", at: s(151) },
    );
    w.verdicts.push({ node_id: "n2", result: "pass", failures: [], at: s(150) });
    return w;
  }
  /** An implant put on n2 at s(120): its handover fails at s(150) and quarantines it; the operator removes it at s(250) and hands it over again, passing at s(290). */
  function implanted(): { w: WorldRows; h: Harness } {
    const w = withIdleNode();
    w.nodeEvents.push(
      { node_id: "n2", from_status: "available", to_status: "releasing", at: s(120) },
      { node_id: "n2", from_status: "releasing", to_status: "wiping", at: s(121) },
      { node_id: "n2", from_status: "wiping", to_status: "inspecting", at: s(130) },
      { node_id: "n2", from_status: "inspecting", to_status: "attestation_failed", at: s(150) },
      { node_id: "n2", from_status: "attestation_failed", to_status: "quarantined", at: s(150) },
      { node_id: "n2", from_status: "quarantined", to_status: "releasing", at: s(251) },
      { node_id: "n2", from_status: "releasing", to_status: "wiping", at: s(252) },
      { node_id: "n2", from_status: "wiping", to_status: "inspecting", at: s(260) },
      { node_id: "n2", from_status: "inspecting", to_status: "available", at: s(291) },
    );
    w.verdicts.push(
      { node_id: "n2", result: "fail", failures: ["event_log.event.unknown", "policy.pcr.mismatch"], at: s(150) },
      { node_id: "n2", result: "pass", failures: [], at: s(290) },
    );
    return { w, h: harness({ implants: [{ node_id: "n2", at: s(120), cleared_at: s(250) }] }) };
  }

  it("a handover that ends with a passing attestation, and an implant caught and cleaned, break nothing", () => {
    expect(checkAll(handedOver(), harness())).toEqual([]);
    const { w, h } = implanted();
    expect(checkAll(w, h)).toEqual([]);
  });

  it("a node back in service after a handover without passing attestation", () => {
    const w = handedOver();
    w.verdicts = [{ node_id: "n2", result: "fail", failures: ["policy.pcr.mismatch"], at: s(150) }];
    expect(only(w)).toEqual(["unattested_return_to_service"]);
    // a pass from an earlier handover does not count for this one
    const earlier = handedOver();
    earlier.verdicts = [{ node_id: "n2", result: "pass", failures: [], at: s(60) }];
    expect(only(earlier)).toEqual(["unattested_return_to_service"]);
    // nor does a handover an operator cancelled (quarantined mid-way, then returned by hand)
    const cancelled = withIdleNode();
    cancelled.nodeEvents.push(
      { node_id: "n2", from_status: "available", to_status: "releasing", at: s(120) },
      { node_id: "n2", from_status: "releasing", to_status: "quarantined", at: s(125) },
      { node_id: "n2", from_status: "quarantined", to_status: "available", at: s(200) },
    );
    expect(only(cancelled)).toEqual(["unattested_return_to_service"]);
    // a cluster that does not attest hands over after the wipe alone
    const off = handedOver();
    off.verdicts = [];
    off.nodes[1]!.attested = false;
    expect(checkAll(off, harness())).toEqual([]);
  });

  it("an implant that passed, was never judged, failed for something else, or was not quarantined", () => {
    const passed = implanted();
    passed.w.verdicts[0] = { node_id: "n2", result: "pass", failures: [], at: s(150) };
    expect(only(passed.w, passed.h)).toEqual(["implant_not_caught"]);

    const never = implanted();
    never.w.verdicts = [];
    never.h.implants[0]!.cleared_at = null;
    never.w.nodeEvents = never.w.nodeEvents.filter((e) => e.at < s(150));
    never.w.nodes[1]!.status = "inspecting";
    expect(only(never.w, never.h)).toEqual(["implant_not_caught"]);

    const otherwise = implanted();
    otherwise.w.verdicts[0]!.failures = ["evidence.submission.timeout"];
    expect(only(otherwise.w, otherwise.h)).toEqual(["implant_not_caught"]);

    const loose = implanted();
    loose.w.nodeEvents = loose.w.nodeEvents.filter((e) => e.to_status !== "quarantined");
    expect(checkAll(loose.w, loose.h).map((x) => x.invariant)).toContain("implant_not_caught");
  });

  it("a tenant's work started on an implanted node before it passed clean again", () => {
    const { w, h } = implanted();
    w.replicas.push({
      id: "r2",
      tenant_id: "t1",
      node_id: "n2",
      status: "stopped",
      gpu_ids: [],
      started_at: s(200),
      stopped_at: s(210),
      reservation_id: null,
    });
    expect(checkAll(w, h).filter((x) => x.invariant === "implant_not_caught")).toHaveLength(1);
  });

  it("a reservation's window on an implanted node counts only if it began with the node in service", () => {
    const holding = (startsAt: number) => ({
      id: "h1",
      reservation_id: "res1",
      gpu_count: 8,
      tenant_id: "t1",
      node_id: "n2",
      starts_at: startsAt,
      ends_at: startsAt + 3_600_000,
      closed_at: null,
      live: true,
    });
    const caught = (w: WorldRows, h: Harness) => checkAll(w, h).filter((x) => x.invariant === "implant_not_caught");
    // booked before the implant, beginning while the node is quarantined: the tenant gets nothing there yet
    const quarantined = implanted();
    quarantined.w.holdings.push(holding(s(200)));
    expect(caught(quarantined.w, quarantined.h)).toEqual([]);
    // a window still ahead has not begun
    const ahead = implanted();
    ahead.w.holdings.push(holding(ahead.w.now + 60_000));
    expect(caught(ahead.w, ahead.h)).toEqual([]);
    // returned to service by hand while implanted, and the window begins on it: the tenant has the node
    const returned = implanted();
    returned.w.nodeEvents.push({ node_id: "n2", from_status: "quarantined", to_status: "available", at: s(190) });
    returned.w.holdings.push(holding(s(200)));
    expect(caught(returned.w, returned.h).map((x) => x.detail)).toEqual([
      expect.stringContaining("reservation res1 of tenant t1 started on it"),
    ]);
  });

  it("a node in a handover step past the runner's time limits", () => {
    const w = withIdleNode();
    w.nodes[1] = { ...w.nodes[1]!, status: "wiping", status_since: s(600) - 300_000 };
    // within the wipe limit (300 s) and the report's grace (60 s)
    expect(checkSnapshot(w)).toEqual([]);
    w.nodes[1]!.status_since = s(600) - 300_000 - 60_000 - 61_000;
    expect(checkSnapshot(w).map((x) => x.invariant)).toEqual(["handover_stuck"]);
  });
});

describe("the chaos schedule", () => {
  it("plays every kind of fault at least once in a short run, within the window, the same for the same seed", () => {
    const a = chaosSchedule(seededRandom(7), 5 * 60_000, 200);
    for (const kind of CHAOS_KINDS) expect(a.some((e) => e.kind === kind)).toBe(true);
    expect(a.every((e) => e.atMs >= 0 && e.atMs < 5 * 60_000)).toBe(true);
    expect(a.filter((e) => e.kind === "xid_fatal").length).toBeGreaterThan(5);
    // overheating needs two hot minutes to count: it comes early enough for them
    expect(a.find((e) => e.kind === "overheat")!.atMs).toBeLessThanOrEqual(5 * 60_000 - 180_000);
    expect(chaosSchedule(seededRandom(7), 5 * 60_000, 200)).toEqual(a);
  });

  it("scales node faults with the fleet and the hour", () => {
    const big = chaosSchedule(seededRandom(1), 60 * 60_000, 1000);
    expect(big.filter((e) => e.kind === "xid_fatal")).toHaveLength(40);
    expect(big.filter((e) => e.kind === "db_restart")).toHaveLength(1);
  });
});
