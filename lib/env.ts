import { readFileSync } from "node:fs";
import { z } from "zod";
import { readSigningKey } from "@/lib/agent-install/bundle-signing";
import { IMAGE_REFERENCE } from "@/lib/fleet/image-reference";
import type { NodeAddressPolicy } from "@/lib/fleet/node-address";
import type { BmcAddressPolicy } from "@/lib/redfish/address-policy";
import { DEFAULT_PUBLISHED_PORTS, parsePortRange, type PortRange } from "@/lib/fleet/published-ports";
import { parseCidrList, type Cidr, type ProxyTrust } from "@/lib/http/client-address";
import { parseAllowList } from "@/lib/pipelines/allow-list";

// Every environment variable the app reads is declared and validated here, once.
// Anything else in the code base reads configuration through `env()`.

const optionalUrl = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined))
  .pipe(z.url().optional());

/** A setting that may be unset: blank is unset. */
const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined));
/** The same, for a key or password: never echoed back in an error. */
const optionalSecret = optionalText;

/** A comma-separated list of CIDR ranges (blank: none), named by an example in its error. */
const cidrList = (example: string, what = "CIDR ranges") =>
  z
    .string()
    .trim()
    .optional()
    .transform((v, ctx): Cidr[] => {
      const list = parseCidrList(v ?? "");
      if (list === null) {
        ctx.addIssue({ code: "custom", message: `must be a comma-separated list of ${what}, e.g. ${example}` });
        return z.NEVER;
      }
      return list;
    });

const markupPct = z.coerce.number().min(0, "must be 0 or more").max(1_000, "must be at most 1000");

const boolFlag = z
  .enum(["0", "1", "true", "false", ""])
  .optional()
  .transform((v) => v === "1" || v === "true");

const envSchema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// connection URL")
      .optional(),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    // signs session tokens; there is no built-in fallback (a known secret lets anyone forge a session)
    NEXTAUTH_SECRET: z.string().min(32, "must be at least 32 characters (e.g. `openssl rand -base64 32`)").optional(),
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
    API_BODY_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
    // the test stages: every route checks its own response against its contract (lib/http/response-contract.ts)
    VALIDATE_RESPONSES: boolFlag,
    NODE_OFFLINE_AFTER_S: z.coerce.number().int().min(5).max(86_400).default(90),
    AGENT_HEARTBEAT_INTERVAL_S: z.coerce.number().int().min(1).max(3_600).default(15),
    METRICS_RAW_RETENTION_HOURS: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 365)
      .default(48),
    METRICS_ROLLUP_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(30),
    GPU_TEMP_WARNING_C: z.coerce.number().min(30).max(120).default(80),
    GPU_TEMP_CRITICAL_C: z.coerce.number().min(30).max(130).default(90),
    AUDIT_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(730),
    SMTP_URL: z
      .string()
      .trim()
      .optional()
      .transform((v) => (v ? v : undefined))
      .pipe(
        z
          .string()
          .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
          .optional(),
      ),
    ALERT_EMAIL_FROM: z.string().trim().default("GPUForge alerts <alerts@gpuforge.local>"),
    ALERT_EMAIL_TO: z
      .string()
      .trim()
      .optional()
      .transform((v) =>
        v
          ? v
              .split(",")
              .map((x) => x.trim())
              .filter(Boolean)
          : [],
      )
      .pipe(z.array(z.email("must be a comma-separated list of email addresses"))),
    ALERT_WEBHOOK_URL: optionalUrl,
    REMEDIATION_CAP: z.coerce.number().int().min(0).max(10_000).default(5),
    PREPAID_GRACE_S: z.coerce
      .number()
      .int()
      .min(0)
      .max(30 * 86_400)
      .default(900),
    STRIPE_SECRET_KEY: optionalSecret,
    STRIPE_WEBHOOK_SECRET: optionalSecret,
    STRIPE_API_BASE: optionalUrl,
    REMEDIATION_WINDOW_S: z.coerce
      .number()
      .int()
      .min(60)
      .max(7 * 86_400)
      .default(600),
    // Node execution: tenant code runs only in containers. A job with a command and no image runs in
    // DEFAULT_JOB_IMAGE, or is refused at submit when none is configured; replicas of endpoints that
    // name no image serve from DEFAULT_SERVE_IMAGE (or the agent's GPUFORGE_SERVE_IMAGE).
    DEFAULT_JOB_IMAGE: z
      .string()
      .trim()
      .optional()
      .transform((v) => (v ? v : undefined))
      .pipe(z.string().regex(IMAGE_REFERENCE, "must be a container image reference").optional()),
    DEFAULT_SERVE_IMAGE: z
      .string()
      .trim()
      .optional()
      .transform((v) => (v ? v : undefined))
      .pipe(z.string().regex(IMAGE_REFERENCE, "must be a container image reference").optional()),
    // workload logs: what one run (a job attempt or a replica) may store, and for how long
    WORKLOAD_LOG_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .default(8 * 1024 * 1024),
    WORKLOAD_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(14),
    // Operations: GET /api/metrics answers operator keys, and this bearer token for Prometheus;
    // per-GPU series stop at METRICS_MAX_GPU_SERIES (a gauge says when they were cut)
    METRICS_TOKEN: z
      .string()
      .trim()
      .min(16, "must be at least 16 characters")
      .optional()
      .or(z.literal("").transform(() => undefined)),
    METRICS_MAX_GPU_SERIES: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
    // POST /api/webhooks/alertmanager answers this bearer token (Alertmanager's http_config) and operator keys
    ALERTMANAGER_TOKEN: z
      .string()
      .trim()
      .min(16, "must be at least 16 characters")
      .optional()
      .or(z.literal("").transform(() => undefined)),
    // Alertmanager alerts (by alertname) that quarantine their node, within the blast-radius cap;
    // an alert's own label gpuforge_action="quarantine" (or "none") decides for that alert
    ALERTMANAGER_REMEDIATE_ALERTS: z
      .string()
      .trim()
      .default("GPUFatalXid,GPUXidFatal,GPUUncorrectableEccError,GPURowRemapFailure")
      .transform((v) =>
        v
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean),
      ),
    // How many proxies in front of the app append to X-Forwarded-For (0: none, use the socket address),
    // or which networks they are in. Nothing else is believed about a client's address.
    TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0, "must be 0 or more").max(10).default(0),
    TRUSTED_PROXIES: cidrList("10.0.0.0/8, 192.0.2.7", "IP addresses or CIDR ranges"),
    // Pods and the inference gateway. Nodes' addresses (what SSH commands name and the only places
    // the gateway connects to) must lie in these networks when set (lib/fleet/node-address.ts).
    // the Ed25519 key bundles for nodes are signed with (lib/agent-install/bundle-signing): its PEM
    // or base64 DER inline, or a file holding it; `npm start`'s embedded demo keeps one under .data/
    BUNDLE_SIGNING_KEY: optionalSecret,
    BUNDLE_SIGNING_KEY_FILE: optionalText,
    NODE_ADDRESS_NETWORKS: cidrList("10.20.0.0/16"),
    // the host ports node agents publish on (their own AGENT_PUBLISHED_PORTS): reports outside it are refused
    AGENT_PUBLISHED_PORTS: z
      .string()
      .trim()
      .default(DEFAULT_PUBLISHED_PORTS)
      .transform((v, ctx): PortRange => {
        const range = parsePortRange(v);
        if (!range) {
          ctx.addIssue({ code: "custom", message: "must look like 40000-44999 (unprivileged ports, the agents' own setting)" });
          return z.NEVER;
        }
        return range;
      }),
    // a pod whose container is not up this long after placement fails; a stop its node never confirms counts as done after this
    POD_START_TIMEOUT_S: z.coerce.number().int().min(30).max(86_400).default(900),
    POD_STOP_CONFIRM_S: z.coerce.number().int().min(5).max(3_600).default(120),
    // the gateway's base URL as tenants call it (an endpoint's `url`); default: the app's own (NEXTAUTH_URL)
    GATEWAY_PUBLIC_URL: optionalUrl,
    // a replica must answer with headers within this, and never go quiet for longer than the idle timeout
    GATEWAY_TIMEOUT_S: z.coerce.number().int().min(1).max(3_600).default(60),
    GATEWAY_IDLE_TIMEOUT_S: z.coerce.number().int().min(1).max(3_600).default(120),
    GATEWAY_MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(10 * 1024 * 1024),
    // requests one gateway process sends to one endpoint at once; beyond it answers 429
    GATEWAY_MAX_CONCURRENCY_PER_ENDPOINT: z.coerce.number().int().min(1).max(100_000).default(1_024),
    // what one key (a tenant key or an endpoint key) may have in flight through one gateway process,
    // and start a minute (0: no rate limit): one caller cannot take a whole endpoint's share
    GATEWAY_MAX_CONCURRENCY_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(256),
    GATEWAY_RATE_PER_KEY_PER_MINUTE: z.coerce.number().int().min(0).max(100_000_000).default(300_000),
    // how often a gateway process probes every replica (a failing one leaves rotation within one interval), and each probe's limit
    GATEWAY_PROBE_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
    GATEWAY_PROBE_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
    // how often a gateway process re-reads the replicas it routes to, and writes its per-minute figures
    GATEWAY_REFRESH_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
    GATEWAY_FLUSH_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
    // salts the anonymous page-view session hash; derived from NEXTAUTH_SECRET when unset
    ANALYTICS_SALT: z.string().min(16, "must be at least 16 characters").optional(),
    // jobs one tenant may have waiting (queued or blocked) at once; a submit beyond it answers 429
    MAX_WAITING_JOBS_PER_TENANT: z.coerce.number().int().min(1).max(1_000_000).default(5_000),
    // waiting jobs of each tenant a scheduling cycle reads (its first ones in priority and age order)
    SCHEDULER_TENANT_WINDOW: z.coerce.number().int().min(10).max(50_000).default(1_000),
    // Pipelines: the hosts http steps may call (host, host:port or *.domain, comma-separated; empty:
    // none), and the largest output one step may post or store
    TOOL_CALL_ALLOWED_HOSTS: z.string().trim().default("").transform(parseAllowList),
    // Networks http steps may reach although they are not public (an internal API's, say); every
    // other loopback, private, link-local (cloud metadata), shared or reserved address is refused,
    // whatever name resolves to it
    TOOL_CALL_ALLOWED_NETWORKS: cidrList("10.40.0.0/16"),
    // tool calls one worker process makes at once, and one tenant may have in flight across all workers
    TOOL_CALL_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
    TOOL_CALLS_PER_TENANT: z.coerce.number().int().min(1).max(1_000).default(4),
    PIPELINE_OUTPUT_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024)
      .default(64 * 1024),
    // 32 random bytes (base64 or hex) that encrypt the secrets operators store in the console's
    // settings (SMTP and webhook URLs); without it those secrets can only come from this environment
    SETTINGS_ENCRYPTION_KEY: z
      .string()
      .trim()
      .optional()
      .transform((v) => (v ? v : undefined))
      .refine((v) => v === undefined || decodeKey(v) !== null, "must be 32 random bytes, base64 or hex encoded (openssl rand -base64 32)"),
    // the read-only public listener (npm run public-api): its port, the database role it reads through
    // (a login role granted only gpuforge_public_reader; unset with the embedded database, one is made),
    // and the requests one address may make a minute
    PUBLIC_API_PORT: z.coerce.number().int().min(1).max(65_535).default(3002),
    PUBLIC_API_DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// connection URL")
      .optional(),
    PUBLIC_API_RATE_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(120),
    // Burst to GPU providers (issue 30). A provider is enabled when its key is set; keys are never
    // returned or logged. The URLs are each API's documented base (tests point them at stand-ins).
    RUNPOD_API_KEY: optionalSecret,
    RUNPOD_API_URL: z.url().default("https://api.runpod.io/graphql"),
    LAMBDA_API_KEY: optionalSecret,
    LAMBDA_API_URL: z.url().default("https://cloud.lambda.ai/api/v1"),
    // Lambda's launch requires exactly one SSH key registered in the account (its name)
    LAMBDA_SSH_KEY_NAME: z
      .string()
      .trim()
      .max(200)
      .optional()
      .transform((v) => (v ? v : undefined)),
    VAST_API_KEY: optionalSecret,
    VAST_API_URL: z.url().default("https://console.vast.ai/api/v0"),
    // our price = cost × (1 + markup %), half up to a cent; per-provider markups override the default
    PROVIDER_MARKUP_PCT: markupPct.default(25),
    RUNPOD_MARKUP_PCT: markupPct.optional(),
    LAMBDA_MARKUP_PCT: markupPct.optional(),
    VAST_MARKUP_PCT: markupPct.optional(),
    // what names this installation's provider instances (gpuforge-<id>-<instance>): the reconciler
    // touches only its own, so installations sharing a provider account leave each other's alone.
    // Unset: the id generated once in the database (migration 20261201090300_burst_installation)
    GPUFORGE_INSTALLATION_ID: z
      .string()
      .trim()
      .optional()
      .transform((v) => (v ? v : undefined))
      .pipe(
        z
          .string()
          .regex(/^[a-z0-9]{4,16}$/, "4 to 16 lowercase letters and digits")
          .optional(),
      ),
    // one provider call's limit; the image container-based providers (RunPod, Vast.ai) boot our agent in
    PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(20_000),
    PROVIDER_INSTANCE_IMAGE: z
      .string()
      .trim()
      .default("nvidia/cuda:12.4.1-runtime-ubuntu22.04")
      .pipe(z.string().regex(IMAGE_REFERENCE, "must be a container image reference")),
    // offers are refreshed every five minutes (the background job); older than this they are shown with their age but never launched
    PROVIDER_OFFERS_MAX_AGE_S: z.coerce
      .number()
      .int()
      .min(30)
      .max(7 * 86_400)
      .default(1_800),
    // a job of a tenant that allows burst waits this long for local capacity before it bursts;
    // an instance idle this long is terminated; one whose agent has not registered by the deadline fails over
    BURST_WAIT_S: z.coerce
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .default(300),
    BURST_IDLE_S: z.coerce
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .default(600),
    BURST_REGISTER_DEADLINE_S: z.coerce.number().int().min(10).max(86_400).default(900),
    // how often a live instance's provider is asked about it (interruptions); at once when its node goes quiet
    BURST_STATUS_CHECK_S: z.coerce.number().int().min(1).max(3_600).default(30),
    // spend caps (cents, our price): per tenant per hour and per day; per provider per day (its cost)
    BURST_TENANT_HOURLY_CAP_CENTS: z.coerce.number().int().min(0).max(1e12).default(20_000),
    BURST_TENANT_DAILY_CAP_CENTS: z.coerce.number().int().min(0).max(1e12).default(200_000),
    RUNPOD_DAILY_CAP_CENTS: z.coerce.number().int().min(0).max(1e12).default(500_000),
    LAMBDA_DAILY_CAP_CENTS: z.coerce.number().int().min(0).max(1e12).default(500_000),
    VAST_DAILY_CAP_CENTS: z.coerce.number().int().min(0).max(1e12).default(500_000),
    // a provider that failed (5xx, timeout, 429) is left alone this long, doubling per failure in a row up to the max
    BURST_BACKOFF_S: z.coerce.number().int().min(1).max(3_600).default(30),
    BURST_BACKOFF_MAX_S: z.coerce.number().int().min(1).max(86_400).default(1_800),
    // Self-service accounts (issue 29). The product's name in account mail and pages, and who that
    // mail comes from (default: the alerts' sender). Sign-up is off until an operator turns it on in
    // the settings, or this is set; a sign-up's link is good for SIGNUP_VERIFY_HOURS (then the
    // unverified account is removed), a password reset's for PASSWORD_RESET_MINUTES.
    PRODUCT_NAME: z.string().trim().min(1).max(60).default("GPUForge"),
    MAIL_FROM: optionalText,
    SELF_SERVICE_SIGNUP: boolFlag,
    SIGNUP_VERIFY_HOURS: z.coerce
      .number()
      .int()
      .min(1)
      .max(30 * 24)
      .default(48),
    PASSWORD_RESET_MINUTES: z.coerce
      .number()
      .int()
      .min(5)
      .max(24 * 60)
      .default(60),
    // card deposits through Stripe Checkout: the smallest and largest amount one payment may add, in
    // cents of CARD_DEPOSIT_CURRENCY (an ISO 4217 code Stripe accepts, lower case)
    CARD_DEPOSIT_MIN_CENTS: z.coerce.number().int().min(50).max(100_000_000).default(1_000),
    CARD_DEPOSIT_MAX_CENTS: z.coerce.number().int().min(50).max(100_000_000).default(1_000_000),
    CARD_DEPOSIT_CURRENCY: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^[a-z]{3}$/, "must be a three-letter ISO 4217 currency code, e.g. usd")
      .default("usd"),
    // BMCs (lib/bmc, lib/redfish): the networks their addresses must lie in when set (CIDR list).
    // Loopback and link-local addresses (the control plane's own services, cloud metadata at
    // 169.254.169.254) are refused unless listed here: the deploy-time, explicit choice
    // (lib/redfish/address-policy.ts). And one Redfish request's limit.
    BMC_NETWORKS: cidrList("10.40.0.0/16"),
    BMC_TIMEOUT_S: z.coerce.number().int().min(1).max(300).default(20),
    // Provisioning (lib/provisioning): how long a worker's lease on a node lasts unless renewed (a
    // worker that stalls longer loses it and another continues), and how long after the power-on
    // the node's agent has to register before the provisioning fails.
    PROVISION_LEASE_S: z.coerce.number().int().min(5).max(3_600).default(60),
    PROVISION_AGENT_TIMEOUT_S: z.coerce.number().int().min(30).max(86_400).default(1_800),
    // Attestation verdicts are signed with this Ed25519 key: PKCS#8 PEM, or its 32-byte seed in base64
    // or hex (ATTESTATION_SIGNING_KEY), or a file holding either (ATTESTATION_SIGNING_KEY_FILE; npm
    // start keeps one under .data/). Rotating it keeps old verdicts verifiable: every public key that
    // ever signed stays in the JWKS. Without one, nodes cannot be attested (503), so handovers fail closed.
    ATTESTATION_SIGNING_KEY: optionalSecret,
    ATTESTATION_SIGNING_KEY_FILE: optionalText,
    // how long a nonce issued to a node's agent may be answered
    ATTESTATION_NONCE_TTL_S: z.coerce.number().int().min(10).max(3_600).default(300),
  })
  .superRefine((e, ctx) => {
    if (e.CARD_DEPOSIT_MIN_CENTS > e.CARD_DEPOSIT_MAX_CENTS) {
      ctx.addIssue({ code: "custom", path: ["CARD_DEPOSIT_MIN_CENTS"], message: "must not be more than CARD_DEPOSIT_MAX_CENTS" });
    }
    if (e.TRUSTED_PROXY_HOPS > 0 && e.TRUSTED_PROXIES.length > 0) {
      ctx.addIssue({ code: "custom", path: ["TRUSTED_PROXIES"], message: "set TRUSTED_PROXY_HOPS or TRUSTED_PROXIES, not both" });
    }
    // Inngest's dev mode serves functions without checking request signatures: never in production
    if (e.NODE_ENV === "production" && e.INNGEST_DEV && !["0", "false"].includes(e.INNGEST_DEV.trim().toLowerCase())) {
      ctx.addIssue({
        code: "custom",
        path: ["INNGEST_DEV"],
        message: "must not be set in production: Inngest dev mode skips signature checks on /api/inngest",
      });
    }
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
 * The secret that signs session tokens. It must be configured in every mode: a built-in default
 * would let anyone who read this repository forge a session against a real database. `npm start`
 * generates and keeps one for the embedded demo; servers check it before they listen
 * (assertServerConfig), so a missing secret stops the start instead of failing every request.
 */
export function authSecret(e: Env = env()): string {
  if (e.NEXTAUTH_SECRET) return e.NEXTAUTH_SECRET;
  throw new ConfigError([
    {
      code: "custom",
      path: ["NEXTAUTH_SECRET"],
      message: "is not set: sessions cannot be signed (32+ random characters, e.g. `openssl rand -base64 32`)",
      input: undefined,
    },
  ]);
}

/** Checked by every server before it accepts a request: the configuration parses and has what serving needs. */
function assertServerConfig(source: Record<string, string | undefined> = process.env): Env {
  const e = parseEnv(source);
  authSecret(e);
  return e;
}

const configError = (path: string, message: string) => new ConfigError([{ code: "custom", path: [path], message, input: undefined }]);

/**
 * What a server that takes nodes' addresses or connects to them (the app, the gateway) must have in
 * production: the networks nodes' addresses may be in. Without them any unicast address would do,
 * and a node's agent could point tenants' traffic at the control plane's own neighbours.
 */
export function assertNodeNetworks(e: Env): void {
  if (e.NODE_ENV === "production" && e.NODE_ADDRESS_NETWORKS.length === 0)
    throw configError(
      "NODE_ADDRESS_NETWORKS",
      "must be set in production: the networks your nodes' addresses are in (the inference gateway connects to them, SSH commands name them), e.g. 10.20.0.0/16",
    );
}

/**
 * The text of the key bundles are signed with, inline or from its file; undefined when none is
 * configured. Throws a ConfigError naming the variable when the file cannot be read, both are set,
 * or the text is not an Ed25519 private key.
 */
export function bundleSigningKeyText(e: Env = env()): string | undefined {
  if (e.BUNDLE_SIGNING_KEY && e.BUNDLE_SIGNING_KEY_FILE)
    throw configError("BUNDLE_SIGNING_KEY_FILE", "set BUNDLE_SIGNING_KEY or BUNDLE_SIGNING_KEY_FILE, not both");
  if (e.BUNDLE_SIGNING_KEY) {
    checkSigningKey("BUNDLE_SIGNING_KEY", e.BUNDLE_SIGNING_KEY);
    return e.BUNDLE_SIGNING_KEY;
  }
  if (!e.BUNDLE_SIGNING_KEY_FILE) return undefined;
  let text: string;
  try {
    text = readFileSync(e.BUNDLE_SIGNING_KEY_FILE, "utf8");
  } catch (err) {
    throw configError("BUNDLE_SIGNING_KEY_FILE", `cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  checkSigningKey("BUNDLE_SIGNING_KEY_FILE", text);
  return text;
}

function checkSigningKey(variable: string, text: string) {
  try {
    readSigningKey(text);
  } catch (err) {
    throw configError(variable, (err as Error).message);
  }
}

/**
 * The app's own checks on top: its public address in production (cookies are marked Secure from
 * it, and links, the installer and the gateway's URLs are built from it — never from a request's
 * Host header), and the nodes' networks.
 */
export function assertAppServerConfig(source: Record<string, string | undefined> = process.env): Env {
  const e = assertServerConfig(source);
  if (e.NODE_ENV === "production" && !e.NEXTAUTH_URL)
    throw configError(
      "NEXTAUTH_URL",
      "must be set in production: the app's public address, e.g. https://gpuforge.example.com (cookies, links and the node installer are built from it)",
    );
  assertNodeNetworks(e);
  bundleSigningKeyText(e);
  return e;
}

/** Whose word about a client's address counts (lib/http/client-address). */
export function proxyTrust(e: Env = env()): ProxyTrust {
  return { hops: e.TRUSTED_PROXY_HOPS, cidrs: e.TRUSTED_PROXIES };
}

/** Which addresses nodes may report (lib/fleet/node-address.ts): loopback only outside production, unless listed. */
export function nodeAddressPolicy(e: Env = env()): NodeAddressPolicy {
  return { networks: e.NODE_ADDRESS_NETWORKS, allowLoopback: e.NODE_ENV !== "production" };
}

/** Where BMC requests may go (lib/redfish/address-policy.ts): loopback and link-local only when BMC_NETWORKS lists them. */
export function bmcAddressPolicy(e: Env = env()): BmcAddressPolicy {
  return { networks: e.BMC_NETWORKS };
}
