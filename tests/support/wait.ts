/** Polls a condition every 20 ms until it holds; throws after `ms` (a bound for a broken test, not a measurement). */
export async function until(ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
