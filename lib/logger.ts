import { env } from "@/lib/env";

// Structured one-line JSON logs on stderr; the request id ties a 500 reply to its stack trace.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;

function write(level: Level, message: string, fields: Record<string, unknown> = {}) {
  let min: Level = "info";
  try {
    min = env().LOG_LEVEL;
  } catch {
    // configuration errors are reported elsewhere; keep logging
  }
  if (LEVELS[level] < LEVELS[min]) return;
  process.stderr.write(JSON.stringify({ t: new Date().toISOString(), level, message, ...fields }) + "\n");
}

export const logger = {
  debug: (m: string, f?: Record<string, unknown>) => write("debug", m, f),
  info: (m: string, f?: Record<string, unknown>) => write("info", m, f),
  warn: (m: string, f?: Record<string, unknown>) => write("warn", m, f),
  error: (m: string, f?: Record<string, unknown>) => write("error", m, f),
};
