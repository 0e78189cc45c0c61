/**
 * The SQL condition that fences a statement under a node lease (lib/fleet/node-lease.ts): `$n`
 * parameters holding the node's id and the writer's token. Put it in the WHERE of the statement
 * that writes: a stale token raises GF001 there, inside the statement.
 *
 *   text: `UPDATE provisionings SET ... WHERE id = $3::uuid AND ${fence(1, 2)}`
 */
export function fence(nodeParam: number, tokenParam: number): string {
  return `node_lease_fence($${nodeParam}::uuid, $${tokenParam}::int8) IS NOT NULL`;
}
