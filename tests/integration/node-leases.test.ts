import fc from "fast-check";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import {
  acquireNodeLease,
  assertNodeLease,
  currentNodeLease,
  isStaleLease,
  releaseNodeLease,
  renewNodeLease,
  revokeNodeLease,
  STALE_LEASE_SQLSTATE,
  workerId,
  type NodeLease,
} from "@/lib/fleet/node-lease";
import {
  advanceNodeWithLease,
  beginWorkflowStep,
  finishNodeWorkflow,
  finishWorkflowStep,
  mergeWorkflowDetails,
} from "@/lib/fleet/node-workflows";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { getNodeWorkflow, listNodeWorkflows, runningWorkflowOf, runningWorkflows, startNodeWorkflow } from "@/lib/fleet/node-workflows";
import { LOCK_NODE } from "@/lib/fleet/statements";
import { INSERT_WORKFLOW } from "@/lib/fleet/workflow-statements";
import { actorFor, availableFleet, operatorPrincipal } from "../support/fixtures";
import { codeOf } from "../support/outcomes";

// The worker lease on a node and its fencing token, against the real database: acquisition,
// renewal, release, take-over after expiry and revocation; every fenced write refused under a
// stale token inside its own statement; and, as properties over random interleavings, that the
// token only grows, one worker holds the lease at a time, and no write under an old token lands
// after a newer holder's.

const TTL = 60_000;

async function node(): Promise<string> {
  const f = await availableFleet(1, 1, "L");
  return f.nodes[0]!.node.id;
}

/** A running workflow on the node (inserted as its starter would), for the step writes. */
async function workflow(nodeId: string): Promise<string> {
  await pool().query(`UPDATE nodes SET status = 'releasing', handover_due_since = now() WHERE id = $1`, [nodeId]);
  const [w] = await run(pool(), INSERT_WORKFLOW, [nodeId, "handover", "operator", "test", "test", {}]);
  return w!.id;
}

/** A stalled worker: its lease ran out (what the clock does to a lease nobody renews). */
async function expire(nodeId: string): Promise<void> {
  await pool().query(
    `UPDATE node_leases SET renewed_at = acquired_at, expires_at = acquired_at + interval '1 millisecond' WHERE node_id = $1`,
    [nodeId],
  );
  await new Promise((r) => setTimeout(r, 5));
}

const acquire = (nodeId: string, holder: string, workflowId: string | null = null, ttlMs = TTL) =>
  acquireNodeLease(pool(), { nodeId, purpose: "handover", workflowId, holder, ttlMs });

const stale = (p: Promise<unknown>) =>
  p.then(
    () => "accepted",
    (e: unknown) => (isStaleLease(e) ? "stale" : Promise.reject(e)),
  );

describe("node leases", () => {
  it("acquire, refuse a second holder, renew, release, and acquire again with the next token", async () => {
    const id = await node();
    const a = (await acquire(id, "worker-a"))!;
    expect(a.token).toBe("1");
    expect(a.expiresAt.getTime()).toBeGreaterThan(Date.now() + TTL - 5_000);
    expect(await acquire(id, "worker-b")).toBeNull();
    // the holder itself cannot acquire again either: it renews
    expect(await acquire(id, "worker-a")).toBeNull();
    const renewed = (await renewNodeLease(pool(), a, 120_000))!;
    expect(renewed.token).toBe("1");
    expect(renewed.expiresAt.getTime()).toBeGreaterThan(a.expiresAt.getTime());
    expect(await renewNodeLease(pool(), { ...a, token: "2" }, TTL)).toBeNull();
    expect(await releaseNodeLease(pool(), a)).toBe(true);
    expect(await releaseNodeLease(pool(), a)).toBe(false);
    expect(await renewNodeLease(pool(), a, TTL)).toBeNull();
    const b = (await acquire(id, "worker-b"))!;
    expect(b.token).toBe("2");
    expect(await currentNodeLease(pool(), id)).toMatchObject({ token: "2", holder: "worker-b", purpose: "handover", live: true });
  });

  it("a worker that stalls past its lease loses it: another takes over with a new token, and the old one's writes are refused", async () => {
    const id = await node();
    const wf = await workflow(id);
    const a = (await acquire(id, "worker-a", wf))!;
    const stepA = (await beginWorkflowStep(pool(), a, { name: "release" }))!;
    await expire(id);
    // expired, not yet taken: already refused (a lease is about time, not only about rivals)
    expect(await stale(finishWorkflowStep(pool(), a, stepA.id, { status: "succeeded" }))).toBe("stale");
    expect(await renewNodeLease(pool(), a, TTL)).toBeNull();
    const b = (await acquire(id, "worker-b", wf))!;
    expect(BigInt(b.token)).toBe(BigInt(a.token) + 1n);
    // the new holder continues from the recorded step, under its own token
    const done = (await finishWorkflowStep(pool(), b, stepA.id, { status: "succeeded", message: "taken over" }))!;
    expect(done).toMatchObject({ status: "succeeded", lease_token: b.token, message: "taken over" });
    // every kind of write the old holder might still make is refused, and changes nothing
    expect(await stale(beginWorkflowStep(pool(), a, { name: "wipe" }))).toBe("stale");
    expect(await stale(mergeWorkflowDetails(pool(), a, wf, { late: true }))).toBe("stale");
    expect(await stale(finishNodeWorkflow(pool(), a, wf, { status: "failed", outcome: "late" }))).toBe("stale");
    expect(await stale(db().$transaction((tx) => advanceNodeWithLease(tx, a, { kind: "workflow", step: "released" }, "late")))).toBe(
      "stale",
    );
    expect(await stale(assertNodeLease(pool(), a))).toBe("stale");
    const n = await db().node.findUniqueOrThrow({ where: { id }, select: { status: true } });
    expect(n.status).toBe("releasing");
    expect(await db().nodeWorkflowStep.count({ where: { workflowId: wf } })).toBe(1);
    // while the new holder's writes go through
    const t = await db().$transaction((tx) => advanceNodeWithLease(tx, b, { kind: "workflow", step: "released" }, "released"));
    expect(t).toMatchObject({ ok: true, changed: true, to: "wiping" });
    const ev = await db().nodeEvent.findFirstOrThrow({ where: { nodeId: id }, orderBy: { id: "desc" } });
    expect(ev).toMatchObject({ fromStatus: "releasing", toStatus: "wiping", leaseToken: BigInt(b.token), actor: "worker-b" });
    expect(await finishNodeWorkflow(pool(), b, wf, { status: "succeeded", outcome: "done" })).toBe(true);
  });

  it("a refused write raises SQLSTATE GF001 from the statement itself, through pg and through Prisma", async () => {
    const id = await node();
    const wf = await workflow(id);
    const a = (await acquire(id, "a", wf))!;
    await revokeNodeLease(pool(), id);
    const viaPg = await pool()
      .query(`INSERT INTO node_workflow_steps (workflow_id, node_id, name, lease_token) VALUES ($1, $2, 'x', $3)`, [wf, id, a.token])
      .catch((e: { code?: string }) => e.code);
    expect(viaPg).toBe(STALE_LEASE_SQLSTATE);
    const viaPrisma = await db()
      .$executeRawUnsafe(`UPDATE node_workflows SET lease_token = $1::int8 WHERE id = $2::uuid`, a.token, wf)
      .catch((e: unknown) => e);
    expect(isStaleLease(viaPrisma)).toBe(true);
    // a row written without a token is nobody's worker (an operator's cancellation): not fenced
    await expect(pool().query(`UPDATE node_workflows SET reason = 'operator note' WHERE id = $1`, [wf])).resolves.toBeDefined();
  });

  it("revocation moves the token on: the holder's writes are refused, and the lease is free at once", async () => {
    const id = await node();
    const wf = await workflow(id);
    const a = (await acquire(id, "a", wf))!;
    expect(await revokeNodeLease(pool(), id)).toBe("2");
    expect(await currentNodeLease(pool(), id)).toMatchObject({ holder: "revoked", live: false, workflow_id: null });
    expect(await stale(beginWorkflowStep(pool(), a, { name: "wipe" }))).toBe("stale");
    expect((await acquire(id, "b", wf))!.token).toBe("3");
    expect(await revokeNodeLease(pool(), (await node()) as string)).toBeNull();
  });

  it("the token never goes back, and a lease never changes hands under the same token, whatever statement tries", async () => {
    const id = await node();
    await acquire(id, "a");
    await acquire(id, "b").then((l) => expect(l).toBeNull());
    await expect(pool().query(`UPDATE node_leases SET token = token - 1 WHERE node_id = $1`, [id])).rejects.toMatchObject({
      code: "23514",
    });
    await expect(pool().query(`UPDATE node_leases SET holder = 'thief' WHERE node_id = $1`, [id])).rejects.toMatchObject({ code: "23514" });
    await releaseNodeLease(pool(), { nodeId: id, token: "1" } as NodeLease);
    await expect(pool().query(`UPDATE node_leases SET released_at = NULL WHERE node_id = $1`, [id])).rejects.toMatchObject({
      code: "23514",
    });
  });

  it("parallel acquirers: exactly one wins each round, and each round's token is one above the last", async () => {
    const id = await node();
    let last = 0n;
    for (let round = 0; round < 5; round++) {
      const got = await Promise.all(Array.from({ length: 12 }, (_, i) => acquire(id, `w${round}-${i}`)));
      const winners = got.filter((l): l is NodeLease => l !== null);
      expect(winners).toHaveLength(1);
      expect(BigInt(winners[0]!.token)).toBe(last + 1n);
      last = BigInt(winners[0]!.token);
      await releaseNodeLease(pool(), winners[0]!);
    }
  });

  it("a take-over waits for a write already checked by the fence, and comes after it", async () => {
    const id = await node();
    const wf = await workflow(id);
    const a = (await acquire(id, "a", wf, 1_000))!;
    const c = new pg.Client({ connectionString: inject("databaseUrl") });
    await c.connect();
    try {
      await c.query("BEGIN");
      await c.query(`INSERT INTO node_workflow_steps (workflow_id, node_id, name, lease_token) VALUES ($1, $2, 'slow', $3)`, [
        wf,
        id,
        a.token,
      ]);
      await new Promise((r) => setTimeout(r, 1_100)); // the lease runs out while the checked write is not yet committed
      let taken: NodeLease | null | undefined;
      const takeover = acquire(id, "b", wf).then((l) => (taken = l));
      await new Promise((r) => setTimeout(r, 300));
      expect(taken).toBeUndefined();
      await c.query("COMMIT");
      await takeover;
      expect(taken!.token).toBe("2");
    } finally {
      await c.end();
    }
    const steps = await db().nodeWorkflowStep.findMany({ where: { workflowId: wf }, orderBy: { id: "asc" } });
    expect(steps.map((s) => [s.name, s.leaseToken])).toEqual([["slow", 1n]]);
  });

  it("rejects a lease time outside a second to a day", async () => {
    const id = await node();
    await expect(acquire(id, "a", null, 10)).rejects.toThrow(RangeError);
    expect(workerId("x")).toMatch(/:x$/);
  });
});

describe("node workflows", () => {
  it("one workflow runs on a node at a time; its start moves the node and marks a handover due", async () => {
    const id = await node();
    const out = await db().$transaction(async (tx) => {
      const [row] = await run(tx, LOCK_NODE, [id]);
      return startNodeWorkflow(tx, row!, {
        kind: "handover",
        trigger: "operator",
        event: { kind: "handover", mode: "full" },
        reason: "test",
        actor: "tester",
      });
    });
    expect(out).toMatchObject({ ok: true, workflow: { status: "running", kind: "handover" }, transition: { to: "releasing" } });
    const wf = out.ok ? out.workflow.id : "";
    expect(await runningWorkflowOf(pool(), id)).toMatchObject({ id: wf, kind: "handover", trigger: "operator", steps: [] });
    expect((await runningWorkflows(pool(), "handover", 10_000)).map((w) => w.id)).toContain(wf);
    const n = await db().node.findUniqueOrThrow({ where: { id } });
    expect(n.status).toBe("releasing");
    expect(n.handoverDueSince).not.toBeNull();
    // a second one is refused: by the state machine here, and by the database's unique index whatever writes it
    const again = await db().$transaction(async (tx) => {
      const [row] = await run(tx, LOCK_NODE, [id]);
      return startNodeWorkflow(tx, row!, {
        kind: "handover",
        trigger: "operator",
        event: { kind: "handover", mode: "full" },
        reason: "x",
        actor: "x",
      });
    });
    expect(again.ok).toBe(false);
    await expect(run(pool(), INSERT_WORKFLOW, [id, "provisioning", "operator", "x", "x", {}])).rejects.toMatchObject({ code: "23505" });
  });

  it("an operator taking the node out of its handover cancels the workflow and revokes the lease; the worker's next write is refused", async () => {
    const id = await node();
    const wf = await workflow(id);
    const a = (await acquire(id, "a", wf))!;
    const step = (await beginWorkflowStep(pool(), a, { name: "release", details: { jobs: 0 } }))!;
    expect(await getNodeWorkflow(pool(), wf)).toMatchObject({
      status: "running",
      steps: [{ name: "release", status: "running", leaseToken: a.token, details: { jobs: 0 } }],
    });
    await changeNodeStatus(actorFor(operatorPrincipal), id, "quarantined", "looks wrong");
    expect((await listNodeWorkflows(pool(), id))[0]).toMatchObject({
      id: wf,
      status: "cancelled",
      steps: [{ name: "release", status: "failed", leaseToken: null }],
    });
    const w = await db().nodeWorkflow.findUniqueOrThrow({ where: { id: wf } });
    expect(w).toMatchObject({ status: "cancelled", outcome: "looks wrong", leaseToken: null });
    expect(await db().nodeWorkflowStep.findUniqueOrThrow({ where: { id: BigInt(step.id) } })).toMatchObject({
      status: "failed",
      message: "cancelled: looks wrong",
    });
    // the worker finds nothing left to write, and its lease gone
    expect(await finishWorkflowStep(pool(), a, step.id, { status: "succeeded" })).toBeNull();
    expect(await beginWorkflowStep(pool(), a, { name: "wipe" })).toBeNull();
    expect(await stale(assertNodeLease(pool(), a))).toBe("stale");
    // a write that would change something is refused by the fence (here: a late step row written directly)
    expect(
      await stale(
        pool().query(`INSERT INTO node_workflow_steps (workflow_id, node_id, name, lease_token) VALUES ($1, $2, 'late', $3)`, [
          wf,
          id,
          a.token,
        ]),
      ),
    ).toBe("stale");
    // a finished workflow is history
    await expect(
      pool().query(`UPDATE node_workflows SET status = 'running', finished_at = NULL WHERE id = $1`, [wf]),
    ).rejects.toMatchObject({
      code: "23514",
    });
    // and the node, whose handover never passed, does not return to service on an operator's word
    expect(await codeOf(changeNodeStatus(actorFor(operatorPrincipal), id, "available"))).toBe("invalid_transition");
  });
});

// ---- properties over interleavings ----------------------------------------------------------

type Op =
  | { op: "acquire"; w: number }
  | { op: "renew"; w: number }
  | { op: "release"; w: number }
  | { op: "write"; w: number }
  | { op: "stall" }
  | { op: "revoke" };

const ops = fc.oneof(
  fc.record({ op: fc.constant("acquire" as const), w: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ op: fc.constant("renew" as const), w: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ op: fc.constant("release" as const), w: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ op: fc.constant("write" as const), w: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ op: fc.constant("stall" as const) }),
  fc.record({ op: fc.constant("revoke" as const) }),
);

/** What a lease should do, as a few lines of arithmetic: the model the database is compared with. */
class LeaseModel {
  /** 0: the node never had a lease */
  token = 0;
  released = false;
  expired = false;
  /** the token each worker last acquired */
  held = new Map<number, number>();

  apply(o: Op): string {
    const free = this.token === 0 || this.released || this.expired;
    const mine = "w" in o && this.token > 0 && this.held.get(o.w) === this.token;
    switch (o.op) {
      case "acquire":
        if (!free) return "refused";
        this.token++;
        this.released = false;
        this.expired = false;
        this.held.set(o.w, this.token);
        return `token ${this.token}`;
      case "renew":
      case "write":
        return mine && !this.released && !this.expired ? "ok" : "refused";
      case "release":
        // an expired lease nobody took yet can still be given back
        if (!mine || this.released) return "refused";
        this.released = true;
        return "released";
      case "stall":
        if (this.token > 0) this.expired = true;
        return "stalled";
      case "revoke":
        if (this.token === 0) return "nothing";
        this.token++;
        this.released = true;
        return "revoked";
    }
  }
}

describe("node leases as properties over interleavings", () => {
  it("any sequence of acquire, renew, release, write, stall and revoke by three workers does what the model says", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(ops, { minLength: 1, maxLength: 25 }), async (seq) => {
        const id = await node();
        const wf = await workflow(id);
        const model = new LeaseModel();
        const leases = new Map<number, NodeLease>();
        for (const o of seq) {
          const expected = model.apply(o);
          let actual: string;
          switch (o.op) {
            case "acquire": {
              const l = await acquire(id, `w${o.w}`, wf);
              if (l) leases.set(o.w, l);
              actual = l ? `token ${l.token}` : "refused";
              break;
            }
            case "renew": {
              const l = leases.get(o.w);
              actual = l && (await renewNodeLease(pool(), l, TTL)) ? "ok" : "refused";
              break;
            }
            case "release": {
              const l = leases.get(o.w);
              actual = l && (await releaseNodeLease(pool(), l)) ? "released" : "refused";
              break;
            }
            case "write": {
              const l = leases.get(o.w);
              actual = l ? ((await stale(beginWorkflowStep(pool(), l, { name: "write" }))) === "accepted" ? "ok" : "refused") : "refused";
              break;
            }
            case "stall": {
              await expire(id);
              actual = "stalled";
              break;
            }
            case "revoke":
              actual = (await revokeNodeLease(pool(), id)) === null ? "nothing" : "revoked";
              break;
          }
          expect(actual, `${JSON.stringify(o)} after ${JSON.stringify(seq.slice(0, seq.indexOf(o)))}`).toBe(expected);
        }
        // every accepted write carries the token live at the time, and tokens never go back in write order
        const steps = await db().nodeWorkflowStep.findMany({
          where: { workflowId: wf },
          orderBy: { id: "asc" },
          select: { leaseToken: true },
        });
        const tokens = steps.map((s) => Number(s.leaseToken));
        expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
      }),
      { numRuns: 30 },
    );
  });

  it("workers racing in parallel: one live holder at a time, tokens grow by one per acquisition, no write under an old token after a newer one", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(ops, { minLength: 1, maxLength: 8 }), { minLength: 2, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 8, maxLength: 8 }),
        async (workers, delays) => {
          const id = await node();
          const wf = await workflow(id);
          const acquired: Array<{ token: bigint; holder: string }> = [];
          await Promise.all(
            workers.map(async (script, wi) => {
              let mine: NodeLease | null = null;
              for (const [k, o] of script.entries()) {
                await new Promise((r) => setTimeout(r, delays[(wi + k) % delays.length]));
                if (o.op === "acquire") {
                  const l = await acquire(id, `racer-${wi}`, wf);
                  if (l) {
                    mine = l;
                    acquired.push({ token: BigInt(l.token), holder: l.holder });
                  }
                } else if (o.op === "renew" && mine) await renewNodeLease(pool(), mine, TTL);
                else if (o.op === "release" && mine) await releaseNodeLease(pool(), mine);
                else if (o.op === "write" && mine) await stale(beginWorkflowStep(pool(), mine, { name: `racer-${wi}` }));
                else if (o.op === "stall") await expire(id);
                else if (o.op === "revoke") await revokeNodeLease(pool(), id);
              }
            }),
          );
          // each acquisition got a token of its own
          const tokens = acquired.map((a) => a.token).sort((a, b) => (a < b ? -1 : 1));
          expect(new Set(tokens.map(String)).size).toBe(tokens.length);
          // accepted writes: tokens never go back in the order the database took them, and each
          // token's writes are all by the worker that acquired that token
          const steps = await db().nodeWorkflowStep.findMany({ where: { workflowId: wf }, orderBy: { id: "asc" } });
          const written = steps.map((s) => s.leaseToken!);
          expect(written).toEqual([...written].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
          const holderOf = new Map(acquired.map((a) => [String(a.token), a.holder]));
          for (const s of steps) expect(holderOf.get(String(s.leaseToken))).toBe(s.name);
        },
      ),
      { numRuns: 20 },
    );
  });
});
