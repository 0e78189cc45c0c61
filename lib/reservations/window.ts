/** The capacity window a query asks for: from now (or `from`) for an hour (or to `to`). */
export function capacityWindow(q: { from?: string; to?: string }, now = Date.now()) {
  const from = q.from ? Date.parse(q.from) : now;
  return { from, to: q.to ? Date.parse(q.to) : from + 3_600_000 };
}
