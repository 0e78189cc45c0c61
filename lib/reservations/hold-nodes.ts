import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { columnSet } from "@/lib/db/column-set";

const HOLDINGS = columnSet({ node_id: "uuid[]", gpus: "int[]" }, { ordinality: "ord" });

/**
 * Inserts a reservation's holdings of whole nodes for one window, in the order given: callers pass
 * them in node order, so concurrent bookings lock the same nodes in the same order.
 */
export async function holdNodes(
  c: SqlClient,
  h: { reservationId: string; tenantId: string; nodes: ReadonlyArray<{ nodeId: string; gpus: number }>; from: Date; to: Date },
): Promise<void> {
  const nodes = HOLDINGS.bindRows(h.nodes, { node_id: (n) => n.nodeId, gpus: (n) => n.gpus }, 3);
  await c.query(
    `INSERT INTO reservation_nodes (reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at)
     SELECT $1, $2, x.node_id, x.gpus, $5, $6 FROM ${nodes.sql} ORDER BY x.ord`,
    [h.reservationId, h.tenantId, ...nodes.values, h.from, h.to],
  );
}
