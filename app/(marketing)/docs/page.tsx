import Link from "next/link";

export const metadata = {
  title: "Documentation",
  description: "Install the GPUForge node agent, self-host the control plane, and use the REST API.",
  alternates: { canonical: "/docs" },
};

const sections = [
  {
    href: "/docs/agent",
    title: "Install the node agent",
    body: "Run the agent on every GPU node: what it reads from nvidia-smi, how it registers, heartbeats, runs work and survives outages.",
  },
  {
    href: "/docs/slurm",
    title: "Attach a Slurm cluster",
    body: "Join a Slurm cluster as it is in ten minutes: one bridge on a login node, GPUForge places and Slurm runs.",
  },
  {
    href: "/docs/self-hosting",
    title: "Self-host the control plane",
    body: "PostgreSQL, Inngest, Stripe, SMTP and webhooks: every environment variable, and what each service needs.",
  },
  {
    href: "/docs/api",
    title: "API reference",
    body: "Every route with its request and response schemas, generated from the same definitions the server validates with.",
  },
];

export default function DocsHub() {
  return (
    <main className="mx-auto max-w-4xl px-6 py-16">
      <h1 className="text-4xl font-semibold tracking-tight text-slate-900">Documentation</h1>
      <p className="mt-4 text-lg text-slate-700">From a single GPU node to a billed, multi-tenant fleet.</p>
      <ul className="mt-10 grid gap-6 sm:grid-cols-2">
        {sections.map((s) => (
          <li key={s.href} className="rounded-xl p-6 ring-1 ring-slate-200">
            <h2 className="font-semibold text-slate-900">
              <Link href={s.href} className="hover:underline">
                {s.title}
              </Link>
            </h2>
            <p className="mt-2 text-sm leading-6 text-slate-700">{s.body}</p>
          </li>
        ))}
      </ul>
      <section aria-labelledby="quickstart" className="article mt-14">
        <h2 id="quickstart">Try it on one machine</h2>
        <p>With Node.js 20 and npm, clone the repository and run:</p>
        <pre>
          <code>npm ci &amp;&amp; npm start</code>
        </pre>
        <p>
          It starts an embedded PostgreSQL, seeds a demo fleet of 128 simulated GPUs with tenants and workload, and serves the consoles on
          port 3000. The demo accounts are listed on the sign-in page.
        </p>
      </section>
    </main>
  );
}
