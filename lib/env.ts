import { z } from "zod";

// Every environment variable the app reads is declared and validated here, once.
// Anything else in the code base reads configuration through `env()`.

const optionalUrl = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined))
  .pipe(z.url().optional());

const boolFlag = z
  .enum(["0", "1", "true", "false", ""])
  .optional()
  .transform((v) => v === "1" || v === "true");

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// connection URL")
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  NEXTAUTH_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  NEXTAUTH_URL: optionalUrl,
  DEMO_MODE: boolFlag,
  INNGEST_EVENT_KEY: z.string().optional(),
  INNGEST_SIGNING_KEY: z.string().optional(),
  INNGEST_BASE_URL: optionalUrl,
  INNGEST_DEV: z.string().optional(),
  BACKGROUND_DRIVER: z.enum(["auto", "in-process", "off"]).default("auto"),
  // how long a process trusts an agent key it checked, unless the database says it changed first; 0 checks every request
  API_KEY_CACHE_TTL_S: z.coerce.number().int().min(0).max(300).default(30),
  // GPU metric statements one process runs at once; reports arriving meanwhile share the next one
  // (bench:ingest on 2 cores: 2 beat 4 and 10 on both reports/s and latency)
  INGEST_MAX_STATEMENTS: z.coerce.number().int().min(1).max(64).default(2),
  API_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  NODE_OFFLINE_AFTER_S: z.coerce.number().int().min(5).max(86_400).default(90),
  AGENT_HEARTBEAT_INTERVAL_S: z.coerce.number().int().min(1).max(3_600).default(15),
  METRICS_RAW_RETENTION_HOURS: z.coerce.number().int().min(1).max(24 * 365).default(48),
  METRICS_ROLLUP_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(30),
  GPU_TEMP_WARNING_C: z.coerce.number().min(30).max(120).default(80),
  GPU_TEMP_CRITICAL_C: z.coerce.number().min(30).max(130).default(90),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(730),
  SMTP_URL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .pipe(z.string().regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL").optional()),
  ALERT_EMAIL_FROM: z.string().trim().default("GPUForge alerts <alerts@gpuforge.local>"),
  ALERT_EMAIL_TO: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.split(",").map((x) => x.trim()).filter(Boolean) : []))
    .pipe(z.array(z.email("must be a comma-separated list of email addresses"))),
  ALERT_WEBHOOK_URL: optionalUrl,
  REMEDIATION_CAP: z.coerce.number().int().min(0).max(10_000).default(5),
  PREPAID_GRACE_S: z.coerce.number().int().min(0).max(30 * 86_400).default(900),
  STRIPE_SECRET_KEY: z.string().trim().optional().transform((v) => (v ? v : undefined)),
  STRIPE_WEBHOOK_SECRET: z.string().trim().optional().transform((v) => (v ? v : undefined)),
  STRIPE_API_BASE: optionalUrl,
  REMEDIATION_WINDOW_S: z.coerce.number().int().min(60).max(7 * 86_400).default(600),
  // 32 random bytes (base64 or hex) that encrypt the secrets operators store in the console's
  // settings (SMTP and webhook URLs); without it those secrets can only come from this environment
  SETTINGS_ENCRYPTION_KEY: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => v === undefined || decodeKey(v) !== null, "must be 32 random bytes, base64 or hex encoded (openssl rand -base64 32)"),
});

/** The 32-byte key of SETTINGS_ENCRYPTION_KEY (base64 or hex), or null when it is not one. */
export function decodeKey(v: string): Buffer | null {
  const bytes = /^[0-9a-f]{64}$/i.test(v) ? Buffer.from(v, "hex") : /^[A-Za-z0-9+/_-]{43}=?$/.test(v) ? Buffer.from(v, "base64") : null;
  return bytes && bytes.length === 32 ? bytes : null;
}

export type Env = z.infer<typeof envSchema>;

let cached: Env | undefined;

export class ConfigError extends Error {
  constructor(issues: z.core.$ZodIssue[]) {
    super(
      "Invalid configuration:\n" +
        issues.map((i) => `  - ${i.path.join(".") || "(root)"}: ${i.message}`).join("\n") +
        "\nSee .env.example for every variable and its meaning.",
    );
    this.name = "ConfigError";
  }
}

export function parseEnv(source: Record<string, string | undefined>): Env {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) throw new ConfigError(parsed.error.issues);
  return parsed.data;
}

export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

/** Whether the deployment set a variable itself (rather than leaving it to its default): the settings page says where a value comes from. */
export function envIsSet(name: keyof Env): boolean {
  return Boolean(process.env[name]?.trim());
}

/** Inngest is in charge of background work only when a server to talk to is configured. */
export function inngestConfigured(e: Env = env()): boolean {
  if (e.BACKGROUND_DRIVER === "in-process" || e.BACKGROUND_DRIVER === "off") return false;
  return Boolean(e.INNGEST_EVENT_KEY && e.INNGEST_SIGNING_KEY) || Boolean(e.INNGEST_DEV && e.INNGEST_BASE_URL);
}

export function databaseUrlOrThrow(e: Env = env()): string {
  if (!e.DATABASE_URL) {
    throw new Error(
      "DATABASE_URL is not set. `npm start` starts an embedded PostgreSQL and sets it for you; " +
        "otherwise point it at PostgreSQL 15 or newer.",
    );
  }
  return e.DATABASE_URL;
}

/**
 * next-auth needs a secret to sign session tokens. In production it must be configured;
 * in development and tests a fixed, clearly-labelled secret keeps sign-in working.
 */
export function authSecret(e: Env = env()): string {
  if (e.NEXTAUTH_SECRET) return e.NEXTAUTH_SECRET;
  if (e.NODE_ENV === "production" && !e.DEMO_MODE) {
    throw new Error("NEXTAUTH_SECRET must be set in production (32+ random characters).");
  }
  return "gpuforge-development-secret-not-for-production";
}
