import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ApiError, type Client } from "./client";

// Exit reports wait here, on disk, until the control plane has them. Written before the agent lets
// go of a placement, removed only after a 2xx or an answer saying the report is moot, so a crash or
// an outage never loses one. Each names its placement (attempt and fence): a report about a
// placement the control plane has moved on from is answered 409 and dropped here, having changed
// nothing there.

export interface ExitReport {
  /** the placement's key in the agent's book */
  key: string;
  job_id: string;
  attempt: number;
  fence: string;
  /** interrupted: the agent stopped the run without an outcome (its lease lapsed, or it lost the container) */
  status: "completed" | "failed" | "interrupted";
  exit_code: number;
  error?: string;
  finished_at: string;
}

/** What the control plane said to a report: taken, stale (409: it moved on), or refused otherwise. */
export type ReportAnswer = { outcome: "accepted" } | { outcome: "stale" | "refused"; status: number; code?: string };

export class Outbox {
  private reports: ExitReport[];

  constructor(
    private readonly file: string,
    private readonly log: (m: string) => void = () => {},
    /** hears every answer (the fleet simulator records them to check that no stale report was applied) */
    private readonly onAnswer: (report: ExitReport, answer: ReportAnswer) => void = () => {},
  ) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      // reports of an older agent that named no placement can never be accepted: leave them behind
      this.reports = (JSON.parse(readFileSync(file, "utf8")) as ExitReport[]).filter((r) => r.key && r.fence);
    } catch {
      this.reports = [];
    }
  }

  get pending(): readonly ExitReport[] {
    return this.reports;
  }

  has(key: string): boolean {
    return this.reports.some((r) => r.key === key);
  }

  add(report: ExitReport): void {
    if (this.has(report.key)) return;
    this.reports.push(report);
    this.save();
  }

  /** Sends what it can, oldest first; keeps the rest for the next flush. */
  async flush(client: Client): Promise<{ sent: number; kept: number }> {
    let sent = 0;
    for (const report of [...this.reports]) {
      try {
        const { job_id, status, exit_code, error, attempt, fence } = report;
        await client.call("PATCH", `/api/jobs/${job_id}`, { status, exit_code, ...(error ? { error } : {}), attempt, fence }, 0);
        this.remove(report.key);
        this.onAnswer(report, { outcome: "accepted" });
        sent++;
      } catch (e) {
        // 404: not a job of this node; 409: stale (the job moved on) or already ended; other 4xx: never acceptable
        if (e instanceof ApiError) {
          const code = (e.body as { error?: { code?: string } } | null)?.error?.code;
          this.onAnswer(report, { outcome: e.status === 409 ? "stale" : "refused", status: e.status, ...(code ? { code } : {}) });
          if (e.status === 409)
            this.log(`exit report of job ${report.job_id} attempt ${report.attempt} is stale: the control plane has moved on; dropped`);
          else if (e.status !== 404) this.log(`exit report of job ${report.job_id} refused (HTTP ${e.status}); dropped`);
          this.remove(report.key);
          continue;
        }
        break;
      }
    }
    return { sent, kept: this.reports.length };
  }

  private remove(key: string) {
    this.reports = this.reports.filter((r) => r.key !== key);
    this.save();
  }

  private save() {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.reports));
    renameSync(tmp, this.file); // atomic: a crash leaves the old file or the new, never half of one
  }
}
