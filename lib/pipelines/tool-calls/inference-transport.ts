import "server-only";
import { pool } from "@/lib/db/client";

// How an inference step reaches a tenant's endpoint. The inference gateway (planned in DESIGN.md's
// next shape) will route tenant traffic with least-outstanding-requests balancing and record the
// SLA; until it exists, steps call a ready replica directly at the address its serving side
// reported. The gateway replaces this one implementation; nothing else changes.

export interface InferenceRequest {
  tenantId: string;
  endpoint: string;
  path: string;
  method: string;
  body: unknown;
  signal: AbortSignal;
}

export interface InferenceTransport {
  send(req: InferenceRequest): Promise<Response>;
}

export class NoReplica extends Error {}

export const replicaTransport: InferenceTransport = {
  async send(req) {
    const { rows } = await pool().query<{ serving_url: string }>(
      `SELECT r.serving_url FROM endpoint_replicas r JOIN endpoints e ON e.id = r.endpoint_id
        WHERE e.tenant_id = $1 AND e.name = $2 AND e.deleted_at IS NULL AND r.status = 'ready' AND r.serving_url IS NOT NULL`,
      [req.tenantId, req.endpoint],
    );
    if (!rows.length) throw new NoReplica(`endpoint “${req.endpoint}” has no ready replica that reported a serving address`);
    // spread calls over the ready replicas; the gateway will balance by outstanding requests
    const base = rows[Math.floor(Math.random() * rows.length)]!.serving_url.replace(/\/+$/, "");
    return fetch(base + req.path, {
      method: req.method,
      headers: { "content-type": "application/json" },
      body: req.method === "GET" ? undefined : JSON.stringify(req.body ?? {}),
      redirect: "manual",
      signal: req.signal,
    });
  },
};
