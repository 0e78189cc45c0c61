import Link from "next/link";

export const metadata = { title: { absolute: "GPUForge — the control plane for GPU clouds" } };

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
    body: "Jobs and multi-step pipelines scheduled by priority and fair share under per-tenant quotas, with gang placement, backfill and retries.",
  },
];

const steps = [
  ["Agent", "A small agent on every GPU node reads nvidia-smi, registers the node and streams metrics."],
  ["Control plane", "Keeps the fleet's picture: node lifecycle, GPU health, quotas, keys and an audit trail of every change."],
  ["Scheduler", "Places work on healthy GPUs in one transaction per cycle, and tells tenants why a job still waits."],
  ["Billing", "Meters GPU-seconds in integer cents, invoices each tenant and takes payment through Stripe or prepaid balances."],
];

export default function Landing() {
  return (
    <main>
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
            <Link href="/login" className="rounded-md bg-indigo-500 px-5 py-3 text-sm font-semibold text-white hover:bg-indigo-400">Open the demo console</Link>
            <Link href="/docs/api" className="rounded-md px-5 py-3 text-sm font-semibold text-white ring-1 ring-white/20 hover:bg-white/10">Read the API</Link>
          </div>
        </div>
      </section>
      <section aria-labelledby="services" className="mx-auto max-w-6xl px-6 py-20">
        <h2 id="services" className="text-2xl font-semibold text-slate-900">Three services, one control plane</h2>
        <div className="mt-8 grid gap-6 md:grid-cols-3">
          {services.map((s) => (
            <article key={s.name} className="rounded-xl p-6 ring-1 ring-slate-200">
              <h3 className="font-semibold text-slate-900">{s.name}</h3>
              <p className="mt-2 text-sm leading-6 text-slate-600">{s.body}</p>
            </article>
          ))}
        </div>
      </section>
      <section aria-labelledby="how" className="bg-slate-50">
        <div className="mx-auto max-w-6xl px-6 py-20">
          <h2 id="how" className="text-2xl font-semibold text-slate-900">How it works</h2>
          <ol className="mt-8 grid gap-6 md:grid-cols-4">
            {steps.map(([name, body], i) => (
              <li key={name} className="rounded-xl bg-white p-6 ring-1 ring-slate-200">
                <span className="text-xs font-semibold text-indigo-600">Step {i + 1}</span>
                <h3 className="mt-1 font-semibold text-slate-900">{name}</h3>
                <p className="mt-2 text-sm leading-6 text-slate-600">{body}</p>
              </li>
            ))}
          </ol>
        </div>
      </section>
    </main>
  );
}
