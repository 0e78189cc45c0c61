// The use-case pages (/use-cases/[slug]), statically generated from this file. Figures quoted here
// come from the repository's benchmarks (bench/), measured on a 2-core machine.

export interface UseCase {
  slug: string;
  title: string;
  /** the search phrase the page answers */
  keyword: string;
  description: string;
  headline: string;
  problem: string;
  how: Array<{ title: string; body: string }>;
  proof: Array<{ figure: string; label: string }>;
  faq: Array<{ q: string; a: string }>;
  docs: Array<{ href: string; label: string }>;
}

export const USE_CASES: UseCase[] = [
  {
    slug: "gpu-cluster-management",
    title: "GPU cluster management",
    keyword: "GPU cluster management software",
    description: "Register every cluster, node and GPU, watch their health from nvidia-smi, drain and quarantine nodes through one lifecycle, and let a scheduler place work on healthy GPUs.",
    headline: "Know every GPU you own, and what it is doing right now.",
    problem:
      "Spreadsheets of hostnames and a Grafana board do not tell you which of your 1,000 GPUs is free, which one threw an XID 79 last night, or which node someone left in maintenance. Slurm knows the queue but not the hardware's history; your DCGM exporter knows the hardware but not the tenants.",
    how: [
      { title: "An agent on every node", body: "The GPUForge agent reads nvidia-smi, registers the node idempotently (GPUs matched by UUID, vanished GPUs marked missing, never deleted), heartbeats and streams utilization, memory, temperature, power and XID errors in batches." },
      { title: "One lifecycle for every node", body: "Registered, available, draining, maintenance, quarantined, offline: a state machine with every transition recorded. A heartbeat never brings a node out of maintenance or quarantine by itself." },
      { title: "A fleet floor that stays readable at 10,000 GPUs", body: "Pods, racks, nodes and GPUs on one page, rendered from a single query, with per-GPU health scores from temperature, XIDs, ECC and heartbeat freshness." },
    ],
    proof: [
      { figure: "10,000", label: "GPUs on one fleet floor, one query (103 ms vs 555 ms for per-node lookups)" },
      { figure: "709 ms", label: "to place 2,500 jobs onto 10,000 GPUs in one scheduling cycle" },
      { figure: "0", label: "GPUs allocated twice: the database refuses it, not just the code" },
    ],
    faq: [
      { q: "Does GPUForge replace Slurm or Kubernetes?", a: "It can run work itself through its node agent (a container or a process), or sit beside your existing scheduler as the fleet registry, health monitor and billing system. The REST API is the contract either way." },
      { q: "Which GPUs are supported?", a: "Anything nvidia-smi reports. The agent is tested against recorded output of H100, H200, A100 and L40S nodes, including missing fields and [N/A] values." },
    ],
    docs: [{ href: "/docs/agent", label: "Install the node agent" }, { href: "/docs/api", label: "Fleet API reference" }],
  },
  {
    slug: "ai-infrastructure-monitoring",
    title: "AI infrastructure monitoring",
    keyword: "AI infrastructure monitoring",
    description: "Per-GPU metrics at fleet scale with per-minute rollups, alert rules for idle, hot and unreachable hardware, notifications by email or webhook, and automatic quarantine of failing nodes.",
    headline: "Notice at 3 a.m., tell someone, and pull bad hardware out of service on its own.",
    problem:
      "A GPU that fell off the bus keeps accepting jobs until someone reads the kernel log. Generic monitoring pages you for a hot GPU but does not know which tenant's job runs there, and nothing stops an alert storm from draining half the fleet.",
    how: [
      { title: "Rules that understand GPUs", body: "Idle capacity, allocated-but-idle GPUs, repeated overheating, unreachable nodes and fatal XIDs from NVIDIA's catalogue, per cluster or fleet-wide, evaluated with one set-based query per rule over per-minute rollups." },
      { title: "One event per problem", body: "A unique index keeps one firing event per rule and subject; it resolves by itself when the condition clears, and its details stay in the history." },
      { title: "Remediation with a blast-radius cap", body: "A fatal XID quarantines the node and requeues its jobs elsewhere without spending the tenant's retries. At most five automatic quarantines per ten minutes fleet-wide, counted under a Postgres advisory lock; past that a human is paged instead." },
    ],
    proof: [
      { figure: "121 ms", label: "from XID 79 to the node quarantined (the periodic sweep alone: 9,976 ms)" },
      { figure: "172 ms", label: "until the 16-GPU job that ran there is running again on other nodes" },
      { figure: "5 of 12", label: "nodes quarantined when twelve fail at once: exactly the cap; seven critical alerts for a human" },
    ],
    faq: [
      { q: "Where do notifications go?", a: "Email over SMTP, a Slack-compatible JSON webhook, or both; every notification is kept in an outbox, retried with backoff for hours when a channel is down, and listed with its delivery status in the operator console." },
      { q: "Can a noisy rule empty my fleet?", a: "No. Automatic quarantines are capped fleet-wide across every app instance; beyond the cap the platform raises a critical alert and leaves the decision to a person." },
    ],
    docs: [{ href: "/docs/self-hosting", label: "Configure SMTP and webhooks" }, { href: "/docs/api", label: "Alerts API reference" }],
  },
  {
    slug: "multi-tenant-gpu-platform",
    title: "Multi-tenant GPU platforms",
    keyword: "multi-tenant GPU platform",
    description: "Tenants with GPU quotas, their own users and API keys, fair-share scheduling by priority, and strict isolation: another tenant's object answers 404, never 403.",
    headline: "Share one fleet between many teams without anyone seeing, or starving, anyone else.",
    problem:
      "Internal platforms grow from one team's cluster into a shared service. Then every team wants guarantees: its quota, its keys, its jobs invisible to others, and a fair turn in the queue when the fleet is full.",
    how: [
      { title: "Quotas the database keeps", body: "Each tenant has a GPU quota. Jobs over it wait as blocked with a reason the tenant can read, and the database re-checks every allocation against the quota when the scheduler commits." },
      { title: "Fair share and backfill", body: "Priority first, then the tenant using the smallest share of its quota, then age. Gangs are placed whole, best-fit on as few nodes as possible; small jobs backfill only when they cannot delay the head of the queue." },
      { title: "Isolation tested on every route", body: "Operator, tenant and agent keys with scopes; tenant admins manage their own users and keys. The test suite walks every API operation as six different callers." },
    ],
    proof: [
      { figure: "358×", label: "faster scheduling than one-job-at-a-time placement on the same 10,000-job queue" },
      { figure: "121 ms", label: "median from HTTP submit to a running job with free capacity" },
      { figure: "6 × every route", label: "callers in the isolation test: anonymous, revoked, agent, other tenant, own tenant, operator" },
    ],
    faq: [
      { q: "Can tenants see the hardware?", a: "Tenants see their jobs, where they run and why they wait. Fleet internals (node ids, other tenants' work) stay in the operator console." },
      { q: "How are keys stored?", a: "Only a SHA-256 of each key is stored; the full key is shown once. Revoking a key takes effect on the next request." },
    ],
    docs: [{ href: "/docs/api", label: "Tenants and keys API" }],
  },
  {
    slug: "inference-sla-monitoring",
    title: "Inference SLA monitoring",
    keyword: "inference SLA monitoring",
    description: "Alert on inference endpoints whose p95 latency or availability misses their SLA, with the same rules, notifications and history as the rest of the fleet.",
    headline: "Hold every model endpoint to its p95 and availability targets.",
    problem:
      "Model serving runs in vLLM, TGI or Triton, but whether an endpoint is meeting its promise lives in nobody's system: latency dashboards do not know the SLA, and the SLA document does not know which GPUs the replicas hold.",
    how: [
      { title: "SLA breach as an alert rule", body: "The sla_breach rule type sits beside the hardware rules: same severities, same notification channels, same one-event-per-subject history." },
      { title: "GPUs and replicas in one picture", body: "Endpoints hold GPUs through the same allocator and quotas as jobs, so a replica can never share a GPU with a training run." },
      { title: "What is live today", body: "The alert engine, notifications, the fleet side, endpoints with autoscaling and the SLA report API are all live; pipelines' inference steps call the same endpoints." },
    ],
    proof: [
      { figure: "15 s", label: "rule evaluation interval, and immediately on new samples" },
      { figure: "1", label: "firing event per rule and endpoint, guaranteed by a unique index" },
      { figure: "12", label: "delivery attempts over about 2.5 hours before a notification is marked failed (and kept)" },
    ],
    faq: [
      { q: "Does GPUForge serve models?", a: "No. Serving stays in your stack; GPUForge owns where it runs, whether it is healthy and whether its SLA holds." },
    ],
    docs: [{ href: "/docs/api", label: "Alerts API reference" }],
  },
  {
    slug: "agentic-workflow-orchestration",
    title: "Agentic workflow orchestration",
    keyword: "agentic workflow orchestration on GPUs",
    description: "Pipelines as DAGs of GPU steps with fan-out, fan-in and bounded loops, scheduled event-first so the next step starts the moment the last one ends.",
    headline: "Run multi-step agent and training workflows as one pipeline, not a pile of cron jobs.",
    problem:
      "An agentic workload is a graph: generate, evaluate, refine, repeat, each step wanting different GPUs. Chaining them with scripts means polling, lost steps when a node dies, and no single place to see why step four is still waiting.",
    how: [
      { title: "DAGs with depends_on", body: "Steps declare what they depend on; fan-out and fan-in are native, and repeat: n runs a bounded loop. Cycles, unknown steps and duplicates are refused with the field named." },
      { title: "Event-driven scheduling", body: "A finished step wakes the scheduler at once; a periodic sweep catches anything an event missed. Failed steps retry with backoff; work on a lost node is requeued without spending retries." },
      { title: "Durable background work", body: "The same functions run on Inngest when configured, or in-process under Postgres advisory locks, so only one app instance runs each at a time." },
    ],
    proof: [
      { figure: "121 ms", label: "median from submit to running, p99 243 ms" },
      { figure: "0", label: "retries spent when a step is moved off failed hardware" },
      { figure: "1 transaction", label: "per scheduling cycle, with FOR UPDATE SKIP LOCKED on jobs and GPUs" },
    ],
    faq: [
      { q: "How does a pipeline fail?", a: "A step that fails after its retries cancels what has not started and fails the pipeline, with every transition recorded." },
    ],
    docs: [{ href: "/docs/api", label: "Pipelines API reference" }],
  },
  {
    slug: "gpu-billing-and-chargeback",
    title: "GPU billing and chargeback",
    keyword: "GPU billing and chargeback",
    description: "Per-second GPU usage in integer cents, rates with history, monthly invoices with Stripe payment, prepaid balances with a meter, and a database that refuses to bill a second twice.",
    headline: "Bill every GPU-second exactly once, in integer cents.",
    problem:
      "Chargeback built on float arithmetic and nightly exports drifts: a job that crosses midnight is billed twice or not at all, a rate change rewrites last month, and a user who finds the wrong endpoint credits their own balance.",
    how: [
      { title: "Usage segments that cannot overlap", body: "Every run that ends bills its last segment in the same transaction, whichever path ended it; running work accrues hourly. An exclusion constraint refuses two segments of one run that overlap." },
      { title: "Invoices that add up", body: "Lines grouped by GPU type and job, totals checked against the lines by the database, sequential numbers without gaps, a Stripe Checkout link or a local payment page, PDF-ready print and CSV." },
      { title: "Prepaid balances for marketplaces", body: "An append-only ledger is the balance. At zero new work waits and running work stops after a grace period you set; only operators and Stripe can credit a balance." },
    ],
    proof: [
      { figure: "0", label: "seconds billed twice across random sequences of runs, accruals, invoices and payments (property-tested)" },
      { figure: "1 ¢", label: "granularity, rounded half-up once per usage segment" },
      { figure: "1", label: "application of each Stripe event, however often Stripe delivers it" },
    ],
    faq: [
      { q: "What happens to a job still running at month end?", a: "The invoice run bills it up to the end of the period first, so the month includes it; the rest of the run is billed the next month, never twice." },
      { q: "Do I need Stripe?", a: "No. Without it invoices are paid from a prepaid balance or recorded as bank transfers by an operator, both audited." },
    ],
    docs: [{ href: "/docs/self-hosting", label: "Configure Stripe" }, { href: "/docs/api", label: "Billing API reference" }],
  },
];

export function useCase(slug: string): UseCase | undefined {
  return USE_CASES.find((u) => u.slug === slug);
}
