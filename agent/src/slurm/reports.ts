// The bridge's fenced reports on its placements, on disk until the control plane has them, sent in
// the order they were made: a placement's Slurm state (POST /api/jobs/{id}/slurm) always before its
// exit (PATCH /api/jobs/{id}), so its history and its billing end are in before the run is closed.
// Like the node agent's outbox: removed after a 2xx or an answer retrying cannot change (a 409 says
// the placement moved on and nothing was changed); kept, and the flush stopped, while the control
// plane cannot be reached, so nothing is lost and nothing overtakes.
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ApiError, type Client } from "../client";

export interface QueuedReport {
  id: string;
  /** the placement it is about */
  key: string;
  kind: "state" | "exit";
  method: "POST" | "PATCH";
  path: string;
  body: Record<string, unknown>;
  at: string;
}

export type ReportOutcome = { outcome: "accepted" } | { outcome: "stale" | "refused"; status: number; code?: string };

export class ReportQueue {
  private queue: QueuedReport[];

  constructor(
    private readonly file: string,
    private readonly log: (m: string) => void = () => {},
    private readonly onAnswer: (r: QueuedReport, a: ReportOutcome) => void = () => {},
  ) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      this.queue = (JSON.parse(readFileSync(file, "utf8")) as QueuedReport[]).filter((r) => r?.id && r.key && r.path);
    } catch {
      this.queue = [];
    }
  }

  get pending(): readonly QueuedReport[] {
    return this.queue;
  }

  has(key: string): boolean {
    return this.queue.some((r) => r.key === key);
  }

  add(r: Omit<QueuedReport, "id" | "at">): void {
    this.queue.push({ ...r, id: randomUUID(), at: new Date().toISOString() });
    this.save();
  }

  async flush(client: Client): Promise<{ sent: number; kept: number }> {
    let sent = 0;
    for (const r of [...this.queue]) {
      try {
        await client.call(r.method, r.path, r.body, 0);
        this.remove(r.id);
        this.onAnswer(r, { outcome: "accepted" });
        sent++;
      } catch (e) {
        if (e instanceof ApiError && e.status < 500 && e.status !== 408 && e.status !== 429) {
          const code = (e.body as { error?: { code?: string } } | null)?.error?.code;
          this.onAnswer(r, { outcome: e.status === 409 ? "stale" : "refused", status: e.status, ...(code ? { code } : {}) });
          this.log(
            `${r.kind} report on ${r.key} ${e.status === 409 ? `answered 409 (${code ?? "conflict"}): the control plane has moved on` : `refused (HTTP ${e.status})`}; dropped`,
          );
          this.remove(r.id);
          continue;
        }
        break; // unreachable now: keep it, and everything after it, in order
      }
    }
    return { sent, kept: this.queue.length };
  }

  private remove(id: string) {
    this.queue = this.queue.filter((r) => r.id !== id);
    this.save();
  }

  private save() {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.queue));
    renameSync(tmp, this.file);
  }
}
