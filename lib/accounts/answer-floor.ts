import "server-only";

/**
 * Answers no sooner than `floorMs` after it started, whatever `fn` did: where an answer must not
 * tell whether an address has an account, the two paths' work differs (a token and a mail queued,
 * or a lookup), and the difference is measurable from outside. Held to a floor well above either,
 * both answer in the same time; the work itself runs first, so a failure still answers at once.
 */
export async function answerNoSoonerThan<T>(floorMs: number, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const out = await fn();
  const left = floorMs - (performance.now() - started);
  if (left > 0) await new Promise((r) => setTimeout(r, left));
  return out;
}
