// Whether this process serves requests through the app's own HTTP server (scripts/serve.ts), which
// appends each connection's socket address to X-Forwarded-For (lib/http/client-address). Under a
// bare `next start` nothing does: a request that brings its own X-Forwarded-For would have its
// rightmost entry, which the client wrote, taken for its address, and every per-address limit
// (sign-in guesses, public forms, API keys' failures) would count whatever bucket the client
// named. instrumentation.ts therefore refuses to serve in production unless the mark is set.
// The mark lives on the process (a global symbol), not in the environment: a child process or an
// operator's shell cannot inherit it by accident.

const MARK = Symbol.for("gpuforge.own-server");

/** Called by scripts/serve.ts before Next.js starts. */
export function markOwnServer(): void {
  (globalThis as Record<symbol, unknown>)[MARK] = true;
}

export function servedByOwnServer(): boolean {
  return (globalThis as Record<symbol, unknown>)[MARK] === true;
}
