export const metadata = {
  title: "Self-host GPUForge",
  description: "Run the GPUForge control plane on your own PostgreSQL with Inngest, Stripe, SMTP and webhooks: every setting explained.",
  alternates: { canonical: "/docs/self-hosting" },
};

const settings: Array<[string, string]> = [
  [
    "DATABASE_URL",
    "PostgreSQL 15 or newer (the btree_gist extension is used for billing's no-overlap constraint). Without it, the app starts an embedded PostgreSQL under .data/.",
  ],
  [
    "NEXTAUTH_SECRET, NEXTAUTH_URL",
    "Session signing secret (at least 16 characters) and the public address; also used for links in emails and invoices.",
  ],
  [
    "INNGEST_EVENT_KEY, INNGEST_SIGNING_KEY",
    "Run background work (scheduler sweeps, alert evaluation, billing meter, monthly invoices) as Inngest functions served at /api/inngest. Without them, every app instance runs the same jobs in-process under Postgres advisory locks.",
  ],
  [
    "STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET",
    "Stripe Checkout links on invoices and card deposits; point a webhook at /api/webhooks/stripe. Without Stripe, invoices are paid from prepaid balances or by bank transfer (the bank details tenants see are set in the console, Settings → Payments).",
  ],
  ["PREPAID_GRACE_S", "How long running work of a prepaid tenant continues at zero balance (default 900 s)."],
  [
    "SELF_SERVICE_SIGNUP, SIGNUP_VERIFY_HOURS, PASSWORD_RESET_MINUTES",
    "Let strangers sign up as prepaid tenants (or turn it on in Settings → Self-service sign-up); how long a sign-up's confirmation link and a password reset link last (48 h, 60 min).",
  ],
  [
    "PRODUCT_NAME, MAIL_FROM",
    "The name account mail and the sign-up page use, and the sender of account mail (verification, password reset, receipts, low-balance warnings); it leaves through the same SMTP server as alerts.",
  ],
  [
    "CARD_DEPOSIT_MIN_CENTS, CARD_DEPOSIT_MAX_CENTS, CARD_DEPOSIT_CURRENCY",
    "The smallest and largest card deposit through Stripe Checkout, and its currency (defaults $10, $10,000, usd).",
  ],
  [
    "SMTP_URL, ALERT_EMAIL_FROM, ALERT_EMAIL_TO",
    "Alert and demo-request emails through your SMTP server; recipients default to every active operator. Defaults: operators can change them in the console (Settings).",
  ],
  ["ALERT_WEBHOOK_URL", "A Slack-compatible incoming webhook receiving a JSON message per alert. A default, like the email settings."],
  [
    "REMEDIATION_CAP, REMEDIATION_WINDOW_S",
    "The blast-radius cap: at most this many automatic quarantines per window, fleet-wide (default 5 per 600 s). A default operators can change in the console.",
  ],
  [
    "SETTINGS_ENCRYPTION_KEY",
    "32 random bytes, base64 or hex (openssl rand -base64 32). Encrypts (AES-256-GCM) the email server and webhook addresses operators store in the console; they are never shown again. Without it those secrets can only be set here. Changing it makes stored secrets unreadable: the console then says so and the environment's values apply until they are entered again.",
  ],
  ["NODE_OFFLINE_AFTER_S", "Seconds without a heartbeat before a node is offline (default 90)."],
  [
    "METRICS_RAW_RETENTION_HOURS, METRICS_ROLLUP_RETENTION_DAYS",
    "How long raw GPU samples and per-minute rollups are kept (48 h and 30 days).",
  ],
  [
    "METRICS_TOKEN, METRICS_MAX_GPU_SERIES",
    "A bearer token (16+ characters) Prometheus scrapes /api/metrics with, besides operator keys; and the number of GPUs that get per-GPU series (default 10,000).",
  ],
  [
    "ALERTMANAGER_TOKEN, ALERTMANAGER_REMEDIATE_ALERTS",
    "The bearer token Alertmanager posts to /api/webhooks/alertmanager with, and the alert names that quarantine their node within the blast-radius cap.",
  ],
  [
    "NEXT_PUBLIC_GA_ID",
    "Optional GA4 measurement id for the public site; first-party page views are recorded either way (no cookies, Do Not Track honoured).",
  ],
];

export default function SelfHostingDocs() {
  return (
    <main className="mx-auto max-w-3xl px-6 py-16">
      <h1 className="text-4xl font-semibold tracking-tight text-slate-900">Self-host GPUForge</h1>
      <div className="article mt-8">
        <p>
          GPUForge is one Next.js application and a PostgreSQL database. Run as many app instances as you like behind a load balancer:
          anything that allocates (GPUs, quota, invoices, quarantines) is serialised in the database, not in memory.
        </p>
        <h2>Install and migrate</h2>
        <pre>
          <code>npm ci{"\n"}DATABASE_URL=postgres://… NEXTAUTH_SECRET=… NEXTAUTH_URL=https://gpuforge.example.com npm start</code>
        </pre>
        <p>
          With <code>DATABASE_URL</code> set, <code>npm start</code> migrates that database (seeding nothing unless <code>SEED=1</code>),
          builds if needed and serves the app. Migrations are plain SQL in <code>prisma/migrations</code>, applied in order under an
          advisory lock; an edited migration is refused by name. Create the first operator key with{" "}
          <code>npm run key -- create --scope operator --name admin</code>.
        </p>
        <h2>Monitoring</h2>
        <p>
          Every app process serves <code>GET /api/metrics</code> in the Prometheus text format (operator keys, or the{" "}
          <code>METRICS_TOKEN</code> bearer): the fleet&apos;s gauges and its own request, scheduler, ingest and background figures. Ingest
          servers serve their own. Scrape them all:
        </p>
        <pre>
          <code>{`scrape_configs:
  - job_name: gpuforge
    metrics_path: /api/metrics
    authorization: { credentials_file: /etc/prometheus/gpuforge-metrics-token }
    static_configs:
      - targets: [app-1.internal:3000, app-2.internal:3000, ingest-1.internal:3001]`}</code>
        </pre>
        <p>
          Import the <a href="/grafana/gpuforge-dashboard.json">Grafana dashboard</a> (fleet, queue, scheduler, ingest, API, background
          work, processes). Alertmanager alerts from dcgm-exporter rules reach remediation through a webhook receiver:
        </p>
        <pre>
          <code>{`receivers:
  - name: gpuforge
    webhook_configs:
      - url: https://gpuforge.example.com/api/webhooks/alertmanager
        http_config: { authorization: { credentials_file: /etc/alertmanager/gpuforge-token } }
        send_resolved: true`}</code>
        </pre>
        <p>
          Alerts are matched to GPUs by their <code>UUID</code> label and to nodes by <code>Hostname</code>, <code>instance</code> or{" "}
          <code>node</code>; those named in <code>ALERTMANAGER_REMEDIATE_ALERTS</code> quarantine their node under the same blast-radius cap
          as GPUForge&apos;s own rules, and resolved alerts resolve.
        </p>
        <h2 id="settings">Settings</h2>
        <p>
          Everything below is read from the environment when the app starts. Notification channels, the remediation cap and bank details can
          also be set by operators in the console (Settings), where they apply at once on every instance; the environment's values stay the
          defaults.
        </p>
      </div>
      <dl className="mt-6 divide-y divide-slate-200 rounded-xl ring-1 ring-slate-200">
        {settings.map(([k, v]) => (
          <div key={k} id={k.startsWith("STRIPE") ? "payments" : undefined} className="grid gap-2 p-4 sm:grid-cols-3">
            <dt className="font-mono text-sm text-slate-900">{k}</dt>
            <dd className="text-sm leading-6 text-slate-700 sm:col-span-2">{v}</dd>
          </div>
        ))}
      </dl>
      <p className="mt-6 text-sm text-slate-600">
        Every variable is validated at start-up; a bad value is named in the error, and <code>.env.example</code> documents each one.
      </p>
    </main>
  );
}
