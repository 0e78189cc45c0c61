// The soak's invariant checker: pure functions over rows read from the database (read-world.ts)
// and what the soak itself saw (exit-report answers, chaos events, submitted job ids). No I/O, so
// each check is unit-tested with rows that break it (tests/unit/soak-invariants.test.ts).
//
// Times are epoch milliseconds. Rows carry PostgreSQL's transaction timestamps (now()), which are
// taken when a transaction starts, not when it commits: two transactions that touch the same row
// one after the other can record times in the other order, by at most the first one's length.
// Checks that compare times written by different transactions allow TX_SKEW_MS for that.
import { isFatalXid } from "../../lib/fleet/xid-policy";

export const TX_SKEW_MS = 2_000;
/** how long after its cause clears an alert may still fire (evaluation runs every 15 s) */
export const ALERT_GRACE_MS = 45_000;
/** a run not reported this long after its duration ended was lost */
export const OVERDUE_GRACE_MS = 120_000;
/** replicas are moved off a node that left service by the reconciler (every 5 s) */
const REPLICA_MOVE_GRACE_MS = 60_000;
/**
 * a handover's release step stops the work of a node that entered `releasing` (the handover runner,
 * woken by the handover's start and sweeping every 2 s): until then its runs are still open
 */
const RELEASE_STEP_GRACE_MS = 60_000;

interface NodeRow {
  id: string;
  hostname: string;
  status: string;
  last_heartbeat_at: number | null;
  /** its cluster attests nodes in their handovers (not turned off), and the cluster's time limits */
  attested: boolean;
  wipe_timeout_s: number;
  attestation_timeout_s: number;
  /** when it entered its status, read for nodes in a handover state (null otherwise) */
  status_since: number | null;
}
interface NodeEventRow {
  node_id: string;
  from_status: string;
  to_status: string;
  at: number;
}
interface GpuRow {
  id: string;
  node_id: string;
  status: string;
  unhealthy_reason: string | null;
  last_xid: number | null;
  last_xid_at: number | null;
  allocated_job_id: string | null;
  allocated_replica_id: string | null;
}
interface TenantRow {
  id: string;
  name: string;
  gpu_quota: number;
}
interface JobRow {
  id: string;
  tenant_id: string;
  status: string;
  duration_s: number | null;
  submitted_at: number;
  pending_reason: string | null;
  block_reason: string | null;
  last_event: { to_status: string; reason: string; at: number } | null;
}
/** reservation_id: the reservation the run is inside (paid by it, outside the quota); null on demand */
interface PlacementRow {
  job_id: string;
  attempt: number;
  fence: string;
  gpu_ids: string[];
  node_ids: string[];
  started_at: number;
  ended_at: number | null;
  end_status: string | null;
  reservation_id: string | null;
}
interface ReplicaRow {
  id: string;
  tenant_id: string;
  node_id: string | null;
  status: string;
  gpu_ids: string[];
  started_at: number;
  stopped_at: number | null;
  reservation_id: string | null;
}
/** A node a reservation holds for [starts_at, ends_at) (reservation_nodes); live = false: it never held anything. */
interface HoldingRow {
  id: string;
  reservation_id: string;
  tenant_id: string;
  node_id: string;
  gpu_count: number;
  starts_at: number;
  ends_at: number;
  live: boolean;
  closed_at: number | null;
}
interface UsageRow {
  id: string;
  job_id: string | null;
  replica_id: string | null;
  reservation_node_id: string | null;
  attempt: number;
  kind: string;
  settlement: string;
  gpu_count: number;
  started_at: number;
  ended_at: number;
  amount_cents: number;
  ledger_cents: number | null;
}
interface InvoiceRow {
  id: string;
  number: number;
  amount_cents: number;
  lines_cents: number;
  usage_cents: number;
}
interface RemediationRow {
  node_id: string;
  cause: string;
  outcome: string;
  at: number;
}
interface AlertRow {
  id: string;
  rule_type: string;
  subject_id: string;
  node_id: string | null;
  fired_at: number;
  window_s: number;
  occurrences: number;
}
/** An attestation verdict (attestations): its result and the ids of its failures. */
interface VerdictRow {
  node_id: string;
  result: "pass" | "fail";
  failures: string[];
  at: number;
}
interface HotMinutes {
  gpu_id: string;
  buckets: number[];
}

export interface WorldRows {
  now: number;
  nodes: NodeRow[];
  nodeEvents: NodeEventRow[];
  gpus: GpuRow[];
  tenants: TenantRow[];
  jobs: JobRow[];
  placements: PlacementRow[];
  replicas: ReplicaRow[];
  holdings: HoldingRow[];
  usage: UsageRow[];
  invoices: InvoiceRow[];
  remediations: RemediationRow[];
  firingAlerts: AlertRow[];
  hotMinutes: HotMinutes[];
  verdicts: VerdictRow[];
}

export interface ReportRecord {
  job_id: string;
  attempt: number;
  fence: string;
  status: string;
  outcome: "accepted" | "stale" | "refused";
  http?: number;
  code?: string;
  at: number;
}

/** A bootkit the chaos put on a node before sending it through a handover; cleared_at: when the operator removed it (null: not yet). */
export interface ImplantRecord {
  node_id: string;
  at: number;
  cleared_at: number | null;
}

export interface Harness {
  submittedJobIds: Iterable<string>;
  reports: ReportRecord[];
  remediationCap: number;
  remediationWindowS: number;
  implants: ImplantRecord[];
}

export const INVARIANTS = [
  "gpu_held_twice",
  "placement_on_unavailable_hardware",
  "quota_exceeded",
  "run_not_billed_exactly_once",
  "invoice_not_equal_to_lines",
  "quarantine_beyond_cap",
  "stale_report_applied",
  "lost_job",
  "alert_not_resolved",
  "benign_xid_quarantined",
  // tenant handover: a node back in service after a handover without passing attestation, an
  // implanted node not caught (a passing verdict, no failing one, no quarantine, or a tenant's work
  // on it before it was clean again), a node in a handover step past the runner's own time limits
  "unattested_return_to_service",
  "implant_not_caught",
  "handover_stuck",
  // the soak's own observations, not row checks: a server process that died without being killed,
  // and a background job (a scheduling cycle, say) failing run after run for a minute or more
  "process_exited_unexpectedly",
  "background_job_failing",
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  invariant: Invariant;
  subject: string;
  detail: string;
}

const v = (invariant: Invariant, subject: string, detail: string): Violation => ({ invariant, subject, detail });
const iso = (ms: number) => new Date(ms).toISOString();
const groupBy = <T, K>(xs: T[], key: (x: T) => K) => {
  const m = new Map<K, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
};

/** Statuses a node may run work on; quarantine, maintenance and going offline requeue work in the same transaction. */
const SERVING = new Set(["available", "draining"]);
/** The handover's states (lib/fleet/node-lifecycle.ts): the node is between tenants. */
const HANDOVER_STATES = new Set(["releasing", "wiping", "inspecting", "attestation_failed"]);
/**
 * How long the handover runner lets each handover state last before it fails the step (its
 * RELEASE_TIMEOUT_S, the cluster's wipe limit plus the report's grace, the attestation limit; a
 * failed attestation quarantines at once), and how much longer it may take to notice.
 */
const RELEASE_LIMIT_S = 900;
const WIPE_REPORT_GRACE_S = 60;
const HANDOVER_GRACE_MS = 60_000;
/** an implanted node has its failing verdict this long after its handover began */
const IMPLANT_CATCH_MS = 5 * 60_000;
/** what catches an implant: a measurement the policy does not know, or a PCR off its reference */
const MEASUREMENT_FAILURES = new Set(["event_log.event.unknown", "policy.pcr.mismatch"]);

function handoverLimitMs(n: NodeRow): number {
  const s =
    n.status === "releasing"
      ? RELEASE_LIMIT_S
      : n.status === "wiping"
        ? n.wipe_timeout_s + WIPE_REPORT_GRACE_S
        : n.status === "inspecting"
          ? n.attestation_timeout_s
          : 0;
  return s * 1000 + HANDOVER_GRACE_MS;
}

/**
 * What must hold at every moment, checked on each periodic read: no GPU allocated to a job and a
 * replica at once, no tenant over its quota, no run left open on a node out of service
 * (quarantine, maintenance and going offline requeue in the same transaction; a handover's
 * `releasing` is the state in which its release step does it, so a run may stay open there for
 * RELEASE_STEP_GRACE_MS, and never in the handover's later states).
 *
 * The quota, with reservations: a tenant's work on demand (jobs and replicas outside any
 * reservation) never holds more GPUs than the quota, and its reservations active now never hold
 * more than the quota either (a booking is refused otherwise). The two together may exceed it for
 * a while by design: a reservation that starts does not evict on-demand work placed before it, the
 * tenant's next on-demand work waits instead.
 */
export function checkSnapshot(w: WorldRows): Violation[] {
  const out: Violation[] = [];
  for (const g of w.gpus)
    if (g.allocated_job_id && g.allocated_replica_id)
      out.push(v("gpu_held_twice", g.id, `held by job ${g.allocated_job_id} and replica ${g.allocated_replica_id}`));
  const nodes = new Map(w.nodes.map((n) => [n.id, n]));
  const releasing = (n: NodeRow) => n.status === "releasing" && n.status_since !== null && w.now - n.status_since <= RELEASE_STEP_GRACE_MS;
  for (const p of w.placements) {
    if (p.ended_at !== null) continue;
    for (const nodeId of p.node_ids) {
      const node = nodes.get(nodeId);
      if (node && !SERVING.has(node.status) && !releasing(node))
        out.push(
          v(
            "placement_on_unavailable_hardware",
            `job ${p.job_id} attempt ${p.attempt}`,
            `still running on node ${nodeId}, which is ${node.status}`,
          ),
        );
    }
  }
  const tenantOfJob = new Map(w.jobs.map((j) => [j.id, j.tenant_id]));
  const insideJobs = new Set(w.placements.filter((p) => p.ended_at === null && p.reservation_id !== null).map((p) => p.job_id));
  const onDemandReplicas = new Map(w.replicas.filter((r) => r.reservation_id === null).map((r) => [r.id, r.tenant_id]));
  const held = new Map<string, number>();
  for (const g of w.gpus) {
    const t = g.allocated_job_id
      ? insideJobs.has(g.allocated_job_id)
        ? undefined
        : tenantOfJob.get(g.allocated_job_id)
      : g.allocated_replica_id
        ? onDemandReplicas.get(g.allocated_replica_id)
        : undefined;
    if (t) held.set(t, (held.get(t) ?? 0) + 1);
  }
  const reserved = new Map<string, number>();
  for (const h of w.holdings)
    if (h.live && h.starts_at <= w.now && h.ends_at > w.now && h.closed_at === null)
      reserved.set(h.tenant_id, (reserved.get(h.tenant_id) ?? 0) + h.gpu_count);
  for (const n of w.nodes)
    if (HANDOVER_STATES.has(n.status) && n.status_since !== null && w.now - n.status_since > handoverLimitMs(n))
      out.push(
        v(
          "handover_stuck",
          `node ${n.hostname}`,
          `${n.status} since ${iso(n.status_since)}, past the ${Math.round(handoverLimitMs(n) / 1000)} s its handover runner allows`,
        ),
      );
  for (const t of w.tenants) {
    if ((held.get(t.id) ?? 0) > t.gpu_quota)
      out.push(v("quota_exceeded", t.name, `holds ${held.get(t.id)} GPUs on demand, quota ${t.gpu_quota}`));
    if ((reserved.get(t.id) ?? 0) > t.gpu_quota)
      out.push(v("quota_exceeded", t.name, `its active reservations hold ${reserved.get(t.id)} GPUs, quota ${t.gpu_quota}`));
  }
  return out;
}

/** No GPU held by two placements whose holdings overlap in time. */
function checkGpuHistory(w: WorldRows): Violation[] {
  const out: Violation[] = [];
  const holdings: Array<{ gpu: string; who: string; from: number; to: number }> = [];
  for (const p of w.placements)
    for (const gpu of p.gpu_ids)
      holdings.push({ gpu, who: `job ${p.job_id} attempt ${p.attempt}`, from: p.started_at, to: p.ended_at ?? w.now });
  for (const r of w.replicas)
    for (const gpu of r.gpu_ids) holdings.push({ gpu, who: `replica ${r.id}`, from: r.started_at, to: r.stopped_at ?? w.now });
  for (const [gpu, hs] of groupBy(holdings, (h) => h.gpu)) {
    hs.sort((a, b) => a.from - b.from);
    for (let i = 1; i < hs.length; i++) {
      const [a, b] = [hs[i - 1]!, hs[i]!];
      if (b.from < a.to) out.push(v("gpu_held_twice", gpu, `${b.who} from ${iso(b.from)} while ${a.who} held it until ${iso(a.to)}`));
    }
  }
  return out;
}

/** The node's status at time t, from its lifecycle events (before the first: registered). */
function statusAt(events: NodeEventRow[], t: number): string {
  let status = "registered";
  for (const e of events) if (e.at <= t) status = e.to_status;
  return status;
}

/** Whether the node was available at t, allowing for transaction timestamps either side of it. */
function availableNear(events: NodeEventRow[], t: number): boolean {
  if ([t - TX_SKEW_MS, t, t + TX_SKEW_MS].some((x) => statusAt(events, x) === "available")) return true;
  return events.some((e) => Math.abs(e.at - t) <= TX_SKEW_MS && (e.to_status === "available" || e.from_status === "available"));
}

/**
 * No work placed on a node out of service, a GPU with a fatal XID, or a node another tenant's
 * reservation held at that moment; no replica left on a node that left service.
 */
function checkPlacementHardware(w: WorldRows): Violation[] {
  const out: Violation[] = [];
  const events = groupBy(
    [...w.nodeEvents].sort((a, b) => a.at - b.at),
    (e) => e.node_id,
  );
  const nodes = new Map(w.nodes.map((n) => [n.id, n]));
  const gpus = new Map(w.gpus.map((g) => [g.id, g]));
  const tenantOfJob = new Map(w.jobs.map((j) => [j.id, j.tenant_id]));
  const holdings = groupBy(
    w.holdings.filter((h) => h.live),
    (h) => h.node_id,
  );
  const starts = [
    ...w.placements.map((p) => ({
      who: `job ${p.job_id} attempt ${p.attempt}`,
      tenant: tenantOfJob.get(p.job_id),
      nodes: p.node_ids,
      gpus: p.gpu_ids,
      at: p.started_at,
    })),
    ...w.replicas.map((r) => ({
      who: `replica ${r.id}`,
      tenant: r.tenant_id,
      nodes: r.node_id ? [r.node_id] : [],
      gpus: r.gpu_ids,
      at: r.started_at,
    })),
  ];
  for (const s of starts) {
    for (const nodeId of s.nodes) {
      const theirs = (holdings.get(nodeId) ?? []).find(
        (h) =>
          h.tenant_id !== s.tenant && h.starts_at + TX_SKEW_MS <= s.at && s.at < Math.min(h.ends_at, h.closed_at ?? Infinity) - TX_SKEW_MS,
      );
      if (theirs)
        out.push(
          v(
            "placement_on_unavailable_hardware",
            s.who,
            `placed at ${iso(s.at)} on node ${nodeId}, held by another tenant's reservation ${theirs.reservation_id} until ${iso(theirs.ends_at)}`,
          ),
        );
    }
    for (const nodeId of s.nodes) {
      const history = events.get(nodeId) ?? [];
      if (!availableNear(history, s.at))
        out.push(
          v("placement_on_unavailable_hardware", s.who, `placed at ${iso(s.at)} on node ${nodeId}, which was ${statusAt(history, s.at)}`),
        );
    }
    for (const gpuId of s.gpus) {
      const g = gpus.get(gpuId);
      if (!g?.last_xid_at || !isFatalXid(g.last_xid ?? -1) || g.last_xid_at > s.at - TX_SKEW_MS) continue;
      // a return to service clears the GPU's hardware flags
      const returned = (events.get(g.node_id) ?? []).some(
        (e) => e.to_status === "available" && e.at > g.last_xid_at! && e.at <= s.at + TX_SKEW_MS,
      );
      if (!returned)
        out.push(
          v(
            "placement_on_unavailable_hardware",
            s.who,
            `placed at ${iso(s.at)} on GPU ${gpuId}, which reported fatal XID ${g.last_xid} at ${iso(g.last_xid_at)}`,
          ),
        );
    }
  }
  for (const r of w.replicas) {
    if (r.status === "stopped" || !r.node_id) continue;
    const status = nodes.get(r.node_id)?.status;
    const left = (events.get(r.node_id) ?? []).filter((e) => !SERVING.has(e.to_status)).at(-1);
    if (status && !SERVING.has(status) && left && w.now - left.at > REPLICA_MOVE_GRACE_MS) {
      out.push(
        v(
          "placement_on_unavailable_hardware",
          `replica ${r.id}`,
          `still ${r.status} on node ${r.node_id}, ${status} since ${iso(left.at)}`,
        ),
      );
    }
  }
  return out;
}

/**
 * Every run (job attempt, replica) and every node a reservation held billed in segments that tile
 * it from start to end: no gap, no overlap, one final segment once ended. A holding is billed for
 * its whole window, used or not (to its end, or where a release or repair cut it short); one that
 * never held anything (cancelled before its start) is billed nothing.
 */
function checkBilling(w: WorldRows): Violation[] {
  const out: Violation[] = [];
  const byRun = groupBy(w.usage, (u) =>
    u.job_id ? `job ${u.job_id} attempt ${u.attempt}` : u.replica_id ? `replica ${u.replica_id}` : `holding ${u.reservation_node_id}`,
  );
  const runs = [
    ...w.placements.map((p) => ({
      key: `job ${p.job_id} attempt ${p.attempt}`,
      from: p.started_at,
      to: p.ended_at,
      gpus: p.gpu_ids.length,
    })),
    ...w.replicas.map((r) => ({
      key: `replica ${r.id}`,
      from: r.started_at,
      to: r.status === "stopped" ? r.stopped_at : null,
      gpus: r.gpu_ids.length,
    })),
    ...w.holdings
      .filter((h) => h.live)
      .map((h) => ({ key: `holding ${h.id}`, from: h.starts_at, to: h.closed_at === null ? null : h.ends_at, gpus: h.gpu_count })),
  ];
  const known = new Set(runs.map((r) => r.key));
  for (const key of byRun.keys())
    if (!known.has(key)) out.push(v("run_not_billed_exactly_once", key, "usage billed for a run that never held GPUs"));
  for (const run of runs) {
    const segs = [...(byRun.get(run.key) ?? [])].sort((a, b) => a.started_at - b.started_at);
    const finals = segs.filter((s) => s.kind === "final");
    if (run.to !== null && finals.length !== 1)
      out.push(v("run_not_billed_exactly_once", run.key, `ended at ${iso(run.to)} with ${finals.length} final segments`));
    if (run.to === null && finals.length > 0)
      out.push(v("run_not_billed_exactly_once", run.key, "still running, yet billed a final segment"));
    if (segs.length === 0) continue;
    if (segs[0]!.started_at !== run.from)
      out.push(v("run_not_billed_exactly_once", run.key, `billing starts at ${iso(segs[0]!.started_at)}, the run at ${iso(run.from)}`));
    for (let i = 1; i < segs.length; i++) {
      const [a, b] = [segs[i - 1]!, segs[i]!];
      if (b.started_at !== a.ended_at)
        out.push(
          v(
            "run_not_billed_exactly_once",
            run.key,
            `${b.started_at > a.ended_at ? "gap" : "overlap"} between ${iso(a.ended_at)} and ${iso(b.started_at)}`,
          ),
        );
    }
    const last = segs.at(-1)!;
    if (run.to !== null && last.ended_at !== run.to)
      out.push(v("run_not_billed_exactly_once", run.key, `billed until ${iso(last.ended_at)}, ended ${iso(run.to)}`));
    if (finals.length === 1 && last.kind !== "final") out.push(v("run_not_billed_exactly_once", run.key, "billed after its final segment"));
    for (const s of segs) {
      if (s.gpu_count !== run.gpus)
        out.push(v("run_not_billed_exactly_once", run.key, `segment ${s.id} bills ${s.gpu_count} GPUs, the run held ${run.gpus}`));
      if (s.settlement === "prepaid" && s.amount_cents > 0 && s.ledger_cents !== -s.amount_cents)
        out.push(
          v(
            "run_not_billed_exactly_once",
            run.key,
            `prepaid segment ${s.id} of ${s.amount_cents} cents charged ${s.ledger_cents ?? "nothing"}`,
          ),
        );
    }
  }
  return out;
}

function checkInvoices(w: WorldRows): Violation[] {
  return w.invoices
    .filter((i) => i.amount_cents !== i.lines_cents || i.amount_cents !== i.usage_cents)
    .map((i) =>
      v(
        "invoice_not_equal_to_lines",
        `invoice ${i.number}`,
        `amount ${i.amount_cents}, lines ${i.lines_cents}, usage billed on it ${i.usage_cents}`,
      ),
    );
}

/** At most `cap` automatic quarantines in any window of `windowS`. */
function checkQuarantineCap(w: WorldRows, cap: number, windowS: number): Violation[] {
  const times = w.remediations
    .filter((r) => r.outcome === "quarantined")
    .map((r) => r.at)
    .sort((a, b) => a - b);
  const out: Violation[] = [];
  for (let i = cap; i < times.length; i++) {
    if (times[i]! - times[i - cap]! < windowS * 1000)
      out.push(
        v(
          "quarantine_beyond_cap",
          iso(times[i]!),
          `${cap + 1} quarantines within ${Math.round((times[i]! - times[i - cap]!) / 1000)} s (cap ${cap} per ${windowS} s)`,
        ),
      );
  }
  return out;
}

const EFFECTS: Record<string, string[]> = { completed: ["completed"], failed: ["failed", "queued"], interrupted: ["queued"] };

/** A report the control plane took ended exactly the placement it named; one it refused as stale was about a placement already over. */
function checkReports(w: WorldRows, reports: ReportRecord[]): Violation[] {
  const out: Violation[] = [];
  const placements = new Map(w.placements.map((p) => [`${p.job_id}/${p.attempt}`, p]));
  for (const r of reports) {
    const p = placements.get(`${r.job_id}/${r.attempt}`);
    const who = `job ${r.job_id} attempt ${r.attempt}`;
    if (r.outcome === "accepted") {
      if (!p || p.fence !== r.fence)
        out.push(
          v("stale_report_applied", who, `a ${r.status} report with fence ${r.fence} was taken, but that is not the attempt's fence`),
        );
      else if (p.ended_at === null || !EFFECTS[r.status]?.includes(p.end_status ?? ""))
        out.push(
          v(
            "stale_report_applied",
            who,
            `a ${r.status} report was taken; the placement ${p.ended_at === null ? "is still open" : `ended ${p.end_status}`}`,
          ),
        );
    } else if (r.outcome === "stale") {
      if (r.code !== "stale_report")
        out.push(v("stale_report_applied", who, `answered 409 ${r.code ?? "without a code"}, not stale_report`));
      if (p && p.fence === r.fence && (p.ended_at === null || p.ended_at > r.at + TX_SKEW_MS))
        out.push(v("lost_job", who, `its current ${r.status} report was refused as stale at ${iso(r.at)}`));
    } else {
      out.push(v("lost_job", who, `its ${r.status} report was refused (HTTP ${r.http}${r.code ? ` ${r.code}` : ""})`));
    }
  }
  return out;
}

const JOB_STATUSES = new Set(["pending", "queued", "blocked", "running", "completed", "failed", "cancelled"]);
const FINAL = new Set(["completed", "failed", "cancelled"]);

/** Every job is waiting with a reason, running where it was placed, or finished with a recorded reason; none submitted goes missing. */
function checkJobs(w: WorldRows, submitted: Iterable<string>): Violation[] {
  const out: Violation[] = [];
  const jobs = new Map(w.jobs.map((j) => [j.id, j]));
  for (const id of submitted) if (!jobs.has(id)) out.push(v("lost_job", id, "submitted (201) but not in the database"));
  const open = new Map(w.placements.filter((p) => p.ended_at === null).map((p) => [p.job_id, p]));
  for (const j of w.jobs) {
    if (!JOB_STATUSES.has(j.status)) out.push(v("lost_job", j.id, `unknown status ${j.status}`));
    if ((j.status === "queued" || j.status === "blocked") && !j.pending_reason && !j.block_reason && w.now - j.submitted_at > 30_000)
      out.push(v("lost_job", j.id, `${j.status} with no reason`));
    if (FINAL.has(j.status) && (j.last_event?.to_status !== j.status || !j.last_event.reason))
      out.push(v("lost_job", j.id, `${j.status} without a recorded reason`));
    const p = open.get(j.id);
    if (j.status === "running" && !p) out.push(v("lost_job", j.id, "running without a placement"));
    if (j.status !== "running" && p) out.push(v("lost_job", j.id, `${j.status} with an open placement`));
    if (j.status === "running" && p && j.duration_s !== null && w.now - p.started_at > j.duration_s * 1000 + OVERDUE_GRACE_MS) {
      out.push(v("lost_job", j.id, `running since ${iso(p.started_at)} for ${j.duration_s} s: its end was never reported`));
    }
  }
  return out;
}

/** Alerts whose cause cleared more than ALERT_GRACE_MS ago must have resolved (for the causes the soak can tell from the rows). */
function checkAlerts(w: WorldRows): Violation[] {
  const out: Violation[] = [];
  const nodes = new Map(w.nodes.map((n) => [n.id, n]));
  const gpus = new Map(w.gpus.map((g) => [g.id, g]));
  const jobs = new Map(w.jobs.map((j) => [j.id, j]));
  const events = groupBy(
    [...w.nodeEvents].sort((a, b) => a.at - b.at),
    (e) => e.node_id,
  );
  const hot = new Map(w.hotMinutes.map((h) => [h.gpu_id, [...h.buckets].sort((a, b) => b - a)]));
  for (const a of w.firingAlerts) {
    let clearedAt: number | undefined;
    if (a.rule_type === "node_unreachable") {
      const n = nodes.get(a.subject_id);
      const back = (events.get(a.subject_id) ?? []).filter((e) => e.from_status === "offline").at(-1);
      if (
        n &&
        n.status !== "offline" &&
        n.last_heartbeat_at !== null &&
        w.now - n.last_heartbeat_at < a.window_s * 1000 &&
        back &&
        back.at > a.fired_at
      )
        clearedAt = back.at;
    } else if (a.rule_type === "gpu_xid") {
      const g = gpus.get(a.subject_id);
      const returned = g && (events.get(g.node_id) ?? []).filter((e) => e.to_status === "available" && e.at > a.fired_at).at(0);
      if (g?.status === "available" && returned) clearedAt = returned.at;
    } else if (a.rule_type === "gpu_temperature") {
      // the rule counts hot minutes in the window; it is false once the occurrences-th latest has aged out
      const kth = hot.get(a.subject_id)?.[a.occurrences - 1];
      if (kth !== undefined) clearedAt = kth + 60_000 + a.window_s * 1000;
      if (clearedAt !== undefined && clearedAt > w.now) clearedAt = undefined;
    } else if (a.rule_type === "job_moved") {
      const j = jobs.get(a.subject_id);
      if (j && j.status !== "queued" && j.status !== "blocked" && j.last_event) clearedAt = j.last_event.at;
    }
    if (clearedAt !== undefined && w.now - clearedAt > ALERT_GRACE_MS)
      out.push(
        v("alert_not_resolved", `${a.rule_type} ${a.subject_id}`, `fired ${iso(a.fired_at)}; its cause cleared at ${iso(clearedAt)}`),
      );
  }
  return out;
}

/** XIDs the platform's policy calls benign (application or informational) take no GPU out of service and quarantine nothing. */
function checkBenignXids(w: WorldRows): Violation[] {
  const benign = (reason: string | null) => {
    const m = reason ? /^fatal_xid:(\d+)$/.exec(reason) : null;
    return m !== null && !isFatalXid(Number(m[1]));
  };
  return [
    ...w.remediations
      .filter((r) => benign(r.cause))
      .map((r) => v("benign_xid_quarantined", `node ${r.node_id}`, `remediation (${r.outcome}) for ${r.cause}`)),
    ...w.gpus
      .filter((g) => benign(g.unhealthy_reason))
      .map((g) => v("benign_xid_quarantined", `GPU ${g.id}`, `marked unhealthy for ${g.unhealthy_reason}`)),
  ];
}

/**
 * A node that began a handover (on a cluster that attests) comes back into service only with a
 * passing attestation between the two: every return to available after entering a handover state
 * has a pass verdict for the node since (a handover cancelled by an operator does not count: the
 * node still owes one).
 */
function checkHandovers(w: WorldRows): Violation[] {
  const out: Violation[] = [];
  const attested = new Map(w.nodes.map((n) => [n.id, n.attested]));
  const passes = groupBy(
    w.verdicts.filter((x) => x.result === "pass"),
    (x) => x.node_id,
  );
  const events = groupBy(
    [...w.nodeEvents].sort((a, b) => a.at - b.at),
    (e) => e.node_id,
  );
  for (const [nodeId, history] of events) {
    if (attested.get(nodeId) === false) continue;
    let began: number | null = null;
    for (const e of history) {
      if (began === null && HANDOVER_STATES.has(e.to_status)) began = e.at;
      if (e.to_status !== "available" || began === null) continue;
      const since = began;
      if (!(passes.get(nodeId) ?? []).some((x) => x.at >= since - TX_SKEW_MS && x.at <= e.at + TX_SKEW_MS))
        out.push(
          v(
            "unattested_return_to_service",
            `node ${nodeId}`,
            `back in service at ${iso(e.at)} after a handover begun at ${iso(since)}, with no passing attestation in between`,
          ),
        );
      began = null;
    }
  }
  return out;
}

/**
 * Each implanted node is caught: no passing verdict while the implant is on it, a failing one
 * naming a measurement within IMPLANT_CATCH_MS, quarantine after it, and no tenant's work started
 * on it from the implant until it passed again once the implant was gone.
 */
function checkImplants(w: WorldRows, implants: ImplantRecord[]): Violation[] {
  const out: Violation[] = [];
  const verdicts = groupBy(
    [...w.verdicts].sort((a, b) => a.at - b.at),
    (x) => x.node_id,
  );
  const events = groupBy(w.nodeEvents, (e) => e.node_id);
  const tenantOfJob = new Map(w.jobs.map((j) => [j.id, j.tenant_id]));
  for (const im of implants) {
    const subject = `node ${im.node_id}`;
    const history = [...(events.get(im.node_id) ?? [])].sort((a, b) => a.at - b.at);
    const mine = verdicts.get(im.node_id) ?? [];
    const until = im.cleared_at ?? Infinity;
    const after = mine.filter((x) => x.at >= im.at - TX_SKEW_MS);
    const passed = after.find((x) => x.result === "pass" && x.at < until);
    if (passed)
      out.push(v("implant_not_caught", subject, `passed attestation at ${iso(passed.at)} with the implant put on it at ${iso(im.at)}`));
    const failed = after.find((x) => x.result === "fail" && x.at < until);
    if (!failed) {
      if (w.now - im.at > IMPLANT_CATCH_MS && im.cleared_at === null)
        out.push(
          v("implant_not_caught", subject, `no failing attestation in the ${Math.round((w.now - im.at) / 1000)} s since the implant`),
        );
    } else {
      if (!failed.failures.some((f) => MEASUREMENT_FAILURES.has(f)))
        out.push(
          v(
            "implant_not_caught",
            subject,
            `its attestation at ${iso(failed.at)} failed for ${failed.failures.join(", ")}, not a measurement`,
          ),
        );
      const quarantined = (events.get(im.node_id) ?? []).some((e) => e.to_status === "quarantined" && e.at >= failed.at - TX_SKEW_MS);
      if (!quarantined && w.now - failed.at > HANDOVER_GRACE_MS)
        out.push(v("implant_not_caught", subject, `failed attestation at ${iso(failed.at)} and was never quarantined`));
    }
    // the next tenant: nothing starts on the node until it passed once the implant was removed
    const clean = mine.find((x) => x.result === "pass" && x.at >= until)?.at ?? Infinity;
    const inWindow = (t: number) => t > im.at + TX_SKEW_MS && t < clean - TX_SKEW_MS;
    const starts = [
      ...w.placements
        .filter((p) => p.node_ids.includes(im.node_id))
        .map((p) => ({ who: `job ${p.job_id} of tenant ${tenantOfJob.get(p.job_id)}`, at: p.started_at })),
      ...w.replicas
        .filter((r) => r.node_id === im.node_id)
        .map((r) => ({ who: `replica ${r.id} of tenant ${r.tenant_id}`, at: r.started_at })),
      // a reservation's window hands the tenant the node when it begins on a node in service; one
      // booked earlier that begins while the node is out of service (its handover, quarantine) gives
      // it nothing there until the node passes (no work, no bill), and one still ahead has not begun
      ...w.holdings
        .filter((h) => h.node_id === im.node_id && h.live && (h.closed_at === null || h.closed_at > h.starts_at + TX_SKEW_MS))
        .filter((h) => h.starts_at <= w.now && SERVING.has(statusAt(history, h.starts_at)))
        .map((h) => ({ who: `reservation ${h.reservation_id} of tenant ${h.tenant_id}`, at: h.starts_at })),
    ];
    for (const s of starts.filter((x) => inWindow(x.at)))
      out.push(v("implant_not_caught", subject, `${s.who} started on it at ${iso(s.at)}, before it passed attestation clean`));
  }
  return out;
}

export function checkAll(w: WorldRows, h: Harness): Violation[] {
  return [
    ...checkSnapshot(w),
    ...checkGpuHistory(w),
    ...checkPlacementHardware(w),
    ...checkBilling(w),
    ...checkInvoices(w),
    ...checkQuarantineCap(w, h.remediationCap, h.remediationWindowS),
    ...checkReports(w, h.reports),
    ...checkJobs(w, h.submittedJobIds),
    ...checkAlerts(w),
    ...checkBenignXids(w),
    ...checkHandovers(w),
    ...checkImplants(w, h.implants),
  ];
}

/** Background job failures the servers logged, per job: how many, and the 10-second buckets they fell in. */
export interface BackgroundFailures {
  count: number;
  buckets: Set<number>;
}
export const FAILURE_BUCKET_MS = 10_000;
/** failing this long without a pause is no transient (a database restart costs a few seconds) */
export const FAILING_FOR_MS = 60_000;

/** Adds one logged failure of `job` at `at` (epoch ms). */
export function noteBackgroundFailure(failures: Map<string, BackgroundFailures>, job: string, at: number): void {
  const f = failures.get(job) ?? { count: 0, buckets: new Set<number>() };
  f.count++;
  f.buckets.add(Math.floor(at / FAILURE_BUCKET_MS));
  failures.set(job, f);
}

/**
 * No background job fails in every 10-second interval for FAILING_FOR_MS or longer: the fleet's
 * scheduling, billing or remediation would have stopped meanwhile while every row still looked
 * consistent (the soak saw scheduling cycles fail for minutes on a quota check no row breaks).
 */
export function checkBackgroundFailures(failures: Map<string, BackgroundFailures>): Violation[] {
  const out: Violation[] = [];
  const needed = Math.ceil(FAILING_FOR_MS / FAILURE_BUCKET_MS) + 1;
  for (const [job, f] of failures) {
    const buckets = [...f.buckets].sort((a, b) => a - b);
    let best = { from: 0, length: 0 };
    for (let i = 0, start = 0; i < buckets.length; i++) {
      if (i > 0 && buckets[i]! !== buckets[i - 1]! + 1) start = i;
      if (i - start + 1 > best.length) best = { from: buckets[start]!, length: i - start + 1 };
    }
    if (best.length >= needed) {
      out.push(
        v(
          "background_job_failing",
          job,
          `failed in every ${FAILURE_BUCKET_MS / 1000} s for ${(best.length * FAILURE_BUCKET_MS) / 1000} s from ${iso(best.from * FAILURE_BUCKET_MS)} (${f.count} failures in the run)`,
        ),
      );
    }
  }
  return out;
}
