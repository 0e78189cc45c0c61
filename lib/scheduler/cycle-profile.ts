import type pg from "pg";

/**
 * Where one scheduling cycle's time went, filled in when a caller asks for it (the benchmark, to
 * say what a change bought): taking the lock, reading the facts, the pure placement, writing the
 * decisions, committing (the deferred checks run then), and each statement on its own.
 */
export interface CycleProfile {
  lock_ms: number;
  read_ms: number;
  place_ms: number;
  write_ms: number;
  commit_ms: number;
  /** milliseconds by statement, named by its first words */
  statements: Record<string, number>;
}

export const emptyProfile = (): CycleProfile => ({ lock_ms: 0, read_ms: 0, place_ms: 0, write_ms: 0, commit_ms: 0, statements: {} });

/** A statement's name in the profile: its first words, as written. */
function statementLabel(sql: string): string {
  return sql.replace(/\s+/g, " ").trim().slice(0, 60);
}

/**
 * The connection, timing each statement into `profile.statements` (the same connection when no
 * profile is asked for: nothing is added to an everyday cycle).
 */
export function profiled<C extends pg.ClientBase>(c: C, profile: CycleProfile | undefined): C {
  if (!profile) return c;
  const query = c.query.bind(c) as (...args: unknown[]) => Promise<unknown>;
  const timedQuery = async (...args: unknown[]) => {
    const first = args[0] as string | { text: string };
    const label = statementLabel(typeof first === "string" ? first : first.text);
    const t0 = performance.now();
    try {
      return await query(...args);
    } finally {
      profile.statements[label] = (profile.statements[label] ?? 0) + performance.now() - t0;
    }
  };
  return new Proxy(c, { get: (target, key, receiver) => (key === "query" ? timedQuery : Reflect.get(target, key, receiver)) });
}

/** Adds the milliseconds since the last mark to one phase of the profile. */
export function phaseClock(profile: CycleProfile | undefined) {
  let last = performance.now();
  return (phase: Exclude<keyof CycleProfile, "statements">) => {
    const now = performance.now();
    if (profile) profile[phase] += now - last;
    last = now;
  };
}
