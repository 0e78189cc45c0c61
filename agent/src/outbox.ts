import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ApiError, type Client } from "./client";

// Finished-job reports wait here, on disk, until the control plane has them. Written before the
// agent forgets a job, removed only after a 2xx (or an answer saying the report is moot), so a
// crash or an outage never loses one.

export interface ExitReport {
  job_id: string;
  status: "completed" | "failed";
  exit_code: number;
  error?: string;
  finished_at: string;
}

export class Outbox {
  private reports: ExitReport[];

  constructor(private readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      this.reports = JSON.parse(readFileSync(file, "utf8")) as ExitReport[];
    } catch {
      this.reports = [];
    }
  }

  get pending(): readonly ExitReport[] {
    return this.reports;
  }

  add(report: ExitReport): void {
    if (this.reports.some((r) => r.job_id === report.job_id)) return;
    this.reports.push(report);
    this.save();
  }

  /** Sends what it can; keeps the rest for the next flush. */
  async flush(client: Client): Promise<{ sent: number; kept: number }> {
    let sent = 0;
    for (const report of [...this.reports]) {
      try {
        const { job_id, finished_at: _at, ...body } = report;
        await client.call("PATCH", `/api/jobs/${job_id}`, body, 0);
        this.remove(job_id);
        sent++;
      } catch (e) {
        // 404: the job is gone; 409: it was already finished (or cancelled) — nothing left to tell.
        if (e instanceof ApiError && (e.status === 404 || e.status === 409)) {
          this.remove(report.job_id);
          continue;
        }
        break;
      }
    }
    return { sent, kept: this.reports.length };
  }

  private remove(jobId: string) {
    this.reports = this.reports.filter((r) => r.job_id !== jobId);
    this.save();
  }

  private save() {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.reports));
    renameSync(tmp, this.file); // atomic: a crash leaves the old file or the new, never half of one
  }
}
