import Link from "next/link";
import { unstable_cache } from "next/cache";
import { DemoRequestButton, EarlyAccessForm } from "@/components/marketing/demo-request";
import { JsonLd } from "@/components/marketing/json-ld";
import { USE_CASES } from "@/content/use-cases";
import { formatCents } from "@/lib/billing/money";
import { listRates } from "@/lib/billing/rates";
import { logger } from "@/lib/logger";

export const metadata = { title: { absolute: "GPUForge — the control plane for GPU clouds" }, alternates: { canonical: "/" } };

// Rendered per request like every page (its scripts carry the response's nonce, app/layout.tsx);
// the price list is read at most once a minute, so it follows the operator's rates without a
// query per visitor. The build has no database: a failed read renders without prices, and is not
// remembered.
const cachedRates = unstable_cache(
  async () =>
    (await listRates())
      .filter((r) => r.gpu_type !== "*" && r.cents_per_hour > 0)
      .map((r) => ({ gpu_type: r.gpu_type, cents_per_hour: r.cents_per_hour })),
  ["landing-rates"],
  { revalidate: 60 },
);

async function publicRates() {
  try {
    return await cachedRates();
  } catch (e) {
    logger.warn("landing page rendered without rates", { error: String(e) });
    return [];
  }
}

const figures = [
  ["121 ms", "from a fatal XID to the node quarantined"],
  ["709 ms", "to schedule 2,500 jobs onto 10,000 GPUs"],
  ["1 ¢", "billing granularity, per GPU-second"],
];

const services = [
  {
    name: "GPU-as-a-Service",
    body: "Register clusters, nodes and GPUs; node agents report inventory, health and metrics; failing hardware is pulled out of service before tenants notice.",
  },
  {
    name: "Inference as a Service",
    body: "Place model endpoints on GPUs, watch their throughput and latency, and hold them to a p95 and availability SLA with an error budget.",
  },
  {
    name: "Workflow orchestration",
    body: "Jobs and agentic pipelines (steps that hand their outputs on, loops that run until a check passes, calls to HTTP tools and your own endpoints) scheduled by priority and fair share under per-tenant quotas, with retries and a workflow log.",
  },
];

const steps = [
  ["Agent", "A small agent on every GPU node reads nvidia-smi, registers the node and streams metrics."],
  ["Control plane", "Keeps the fleet's picture: node lifecycle, GPU health, quotas, keys and an audit trail of every change."],
  ["Scheduler", "Places work on healthy GPUs in one transaction per cycle, and tells tenants why a job still waits."],
  ["Billing", "Meters GPU-seconds in integer cents, invoices each tenant and takes payment through Stripe or prepaid balances."],
];

export default async function Landing() {
  const rates = await publicRates();
  return (
    <main>
      <JsonLd
        data={{
          "@context": "https://schema.org",
          "@type": "SoftwareApplication",
          name: "GPUForge",
          applicationCategory: "BusinessApplication",
          operatingSystem: "Linux",
          description:
            "Control plane for GPU clouds: fleet registry, fair scheduling with quotas, per-second billing and automatic remediation.",
        }}
      />
      <section className="bg-slate-900">
        <div className="mx-auto max-w-6xl px-6 py-24">
          <p className="text-sm font-semibold uppercase tracking-wider text-indigo-400">For GPU cloud operators</p>
          <h1 className="mt-3 max-w-3xl text-4xl font-semibold tracking-tight text-white sm:text-5xl">
            Turn racks of GPU servers into a shared, billed, self-healing service.
          </h1>
          <p className="mt-6 max-w-2xl text-lg text-slate-300">
            GPUForge is the control plane between your hardware and your tenants: it knows every GPU, schedules work fairly under quotas,
            bills usage by the second and quarantines failing nodes on its own.
          </p>
          <div className="mt-10 flex flex-wrap gap-3">
            <DemoRequestButton />
            <Link href="/signup" className="rounded-md bg-white px-5 py-3 text-sm font-semibold text-slate-900 hover:bg-slate-100">
              Rent GPUs: create an account
            </Link>
            <Link href="/login" className="rounded-md px-5 py-3 text-sm font-semibold text-white ring-1 ring-white/30 hover:bg-white/10">
              Open the demo console
            </Link>
            <Link href="/docs" className="rounded-md px-5 py-3 text-sm font-semibold text-white ring-1 ring-white/30 hover:bg-white/10">
              Read the docs
            </Link>
          </div>
          <dl className="mt-14 grid max-w-3xl gap-6 sm:grid-cols-3">
            {figures.map(([figure, label]) => (
              <div key={label} className="flex flex-col border-l border-white/20 pl-4">
                <dt className="text-sm text-slate-300">{label}</dt>
                <dd className="order-first text-2xl font-semibold text-white">{figure}</dd>
              </div>
            ))}
          </dl>
        </div>
      </section>
      <section aria-labelledby="services" className="mx-auto max-w-6xl px-6 py-20">
        <h2 id="services" className="text-2xl font-semibold text-slate-900">
          Three services, one control plane
        </h2>
        <div className="mt-8 grid gap-6 md:grid-cols-3">
          {services.map((s) => (
            <article key={s.name} className="rounded-xl p-6 ring-1 ring-slate-200">
              <h3 className="font-semibold text-slate-900">{s.name}</h3>
              <p className="mt-2 text-sm leading-6 text-slate-700">{s.body}</p>
            </article>
          ))}
        </div>
      </section>
      <section aria-labelledby="how" className="bg-slate-50">
        <div className="mx-auto max-w-6xl px-6 py-20">
          <h2 id="how" className="text-2xl font-semibold text-slate-900">
            How it works
          </h2>
          <ol className="mt-8 grid gap-6 md:grid-cols-4">
            {steps.map(([name, body], i) => (
              <li key={name} className="rounded-xl bg-white p-6 ring-1 ring-slate-200">
                <span className="text-xs font-semibold text-indigo-600">Step {i + 1}</span>
                <h3 className="mt-1 font-semibold text-slate-900">{name}</h3>
                <p className="mt-2 text-sm leading-6 text-slate-700">{body}</p>
              </li>
            ))}
          </ol>
        </div>
      </section>
      <section aria-labelledby="use-cases" className="mx-auto max-w-6xl px-6 py-20">
        <h2 id="use-cases" className="text-2xl font-semibold text-slate-900">
          What operators run on it
        </h2>
        <ul className="mt-8 grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {USE_CASES.map((u) => (
            <li key={u.slug}>
              <Link href={`/use-cases/${u.slug}`} className="block rounded-xl p-5 ring-1 ring-slate-200 hover:ring-indigo-300">
                <span className="font-semibold text-slate-900">{u.title}</span>
                <span className="mt-1 block text-sm text-slate-700">{u.headline}</span>
              </Link>
            </li>
          ))}
        </ul>
      </section>
      {rates.length ? (
        <section aria-labelledby="rates" className="bg-slate-50">
          <div className="mx-auto max-w-6xl px-6 py-20">
            <h2 id="rates" className="text-2xl font-semibold text-slate-900">
              GPU rates on the demo cloud
            </h2>
            <p className="mt-2 text-slate-700">Set by the operator, billed per second, in integer cents.</p>
            <ul className="mt-8 grid gap-4 sm:grid-cols-3 lg:grid-cols-5">
              {rates.map((r) => (
                <li key={r.gpu_type} className="rounded-xl bg-white p-5 ring-1 ring-slate-200">
                  <p className="text-sm font-medium text-slate-700">{r.gpu_type}</p>
                  <p className="mt-1 text-2xl font-semibold text-slate-900">
                    {formatCents(r.cents_per_hour)}
                    <span className="text-sm font-normal text-slate-600"> / GPU-hour</span>
                  </p>
                </li>
              ))}
            </ul>
          </div>
        </section>
      ) : null}
      <section aria-labelledby="early" className="mx-auto max-w-6xl px-6 py-20">
        <div className="grid gap-10 rounded-2xl bg-slate-900 p-10 lg:grid-cols-2">
          <div>
            <h2 id="early" className="text-2xl font-semibold text-white">
              GPU pods and an inference gateway are next
            </h2>
            <p className="mt-3 text-slate-300">
              Inference endpoints with SLA tracking and autoscaling run today, and so do agentic pipelines. Next: GPU pods you can open a
              shell in, and one gateway URL per endpoint. Join the early-access list, or ask for a demo of what runs today.
            </p>
            <div className="mt-6">
              <DemoRequestButton label="Talk to an engineer" />
            </div>
          </div>
          <div className="rounded-xl bg-white p-6">
            <EarlyAccessForm />
          </div>
        </div>
      </section>
    </main>
  );
}
