import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { DemoRequestButton } from "@/components/marketing/demo-request";
import { JsonLd } from "@/components/marketing/json-ld";
import { USE_CASES, useCase } from "@/content/use-cases";

// Statically generated at build time, one page per use case; anything else is a 404.
export const dynamicParams = false;

export function generateStaticParams() {
  return USE_CASES.map((u) => ({ slug: u.slug }));
}

export async function generateMetadata({ params }: { params: Promise<{ slug: string }> }): Promise<Metadata> {
  const u = useCase((await params).slug);
  if (!u) return {};
  return {
    title: `${u.title}: ${u.headline}`,
    description: u.description,
    alternates: { canonical: `/use-cases/${u.slug}` },
    openGraph: { type: "article", title: `${u.title} — GPUForge`, description: u.description, url: `/use-cases/${u.slug}` },
  };
}

export default async function UseCasePage({ params }: { params: Promise<{ slug: string }> }) {
  const u = useCase((await params).slug);
  if (!u) notFound();
  return (
    <main>
      <JsonLd
        data={{
          "@context": "https://schema.org",
          "@type": "FAQPage",
          mainEntity: u.faq.map((f) => ({ "@type": "Question", name: f.q, acceptedAnswer: { "@type": "Answer", text: f.a } })),
        }}
      />
      <section className="bg-slate-900">
        <div className="mx-auto max-w-6xl px-6 py-20">
          <nav aria-label="Breadcrumb" className="text-sm text-slate-400">
            <Link href="/use-cases" className="hover:text-white">
              Use cases
            </Link>{" "}
            / {u.title}
          </nav>
          <h1 className="mt-4 max-w-3xl text-4xl font-semibold tracking-tight text-white">{u.headline}</h1>
          <p className="mt-5 max-w-2xl text-lg text-slate-300">{u.description}</p>
          <div className="mt-8 flex flex-wrap gap-3">
            <DemoRequestButton />
            <Link href="/login" className="rounded-md px-5 py-3 text-sm font-semibold text-white ring-1 ring-white/30 hover:bg-white/10">
              Open the demo console
            </Link>
          </div>
        </div>
      </section>
      <section aria-labelledby="problem" className="mx-auto max-w-3xl px-6 py-16">
        <h2 id="problem" className="text-2xl font-semibold text-slate-900">
          The problem
        </h2>
        <p className="mt-4 text-lg leading-8 text-slate-700">{u.problem}</p>
      </section>
      <section aria-labelledby="how" className="bg-slate-50">
        <div className="mx-auto max-w-6xl px-6 py-16">
          <h2 id="how" className="text-2xl font-semibold text-slate-900">
            How GPUForge does it
          </h2>
          <div className="mt-8 grid gap-6 md:grid-cols-3">
            {u.how.map((h) => (
              <article key={h.title} className="rounded-xl bg-white p-6 ring-1 ring-slate-200">
                <h3 className="font-semibold text-slate-900">{h.title}</h3>
                <p className="mt-2 text-sm leading-6 text-slate-700">{h.body}</p>
              </article>
            ))}
          </div>
        </div>
      </section>
      <section aria-labelledby="proof" className="mx-auto max-w-6xl px-6 py-16">
        <h2 id="proof" className="text-2xl font-semibold text-slate-900">
          Measured, not promised
        </h2>
        <dl className="mt-8 grid gap-6 md:grid-cols-3">
          {u.proof.map((p) => (
            <div key={p.label} className="flex flex-col rounded-xl p-6 ring-1 ring-slate-200">
              <dt className="text-sm text-slate-700">{p.label}</dt>
              <dd className="order-first text-3xl font-semibold tracking-tight text-indigo-700">{p.figure}</dd>
            </div>
          ))}
        </dl>
        <p className="mt-4 text-sm text-slate-600">
          Figures from the repository&apos;s benchmarks (<code>npm run bench:*</code>) on a 2-core machine.
        </p>
      </section>
      <section aria-labelledby="faq" className="mx-auto max-w-3xl px-6 pb-16">
        <h2 id="faq" className="text-2xl font-semibold text-slate-900">
          Questions operators ask
        </h2>
        <dl className="mt-6 space-y-6">
          {u.faq.map((f) => (
            <div key={f.q}>
              <dt className="font-semibold text-slate-900">{f.q}</dt>
              <dd className="mt-2 leading-7 text-slate-700">{f.a}</dd>
            </div>
          ))}
        </dl>
        <ul className="mt-10 flex flex-wrap gap-4">
          {u.docs.map((d) => (
            <li key={d.href}>
              <Link href={d.href} className="font-medium text-indigo-700 hover:underline">
                {d.label} →
              </Link>
            </li>
          ))}
        </ul>
      </section>
    </main>
  );
}
