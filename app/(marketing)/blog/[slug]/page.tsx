import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { JsonLd } from "@/components/marketing/json-ld";
import { allPosts, post } from "@/lib/marketing/blog";

export const dynamicParams = false;

export function generateStaticParams() {
  return allPosts().map((p) => ({ slug: p.slug }));
}

export async function generateMetadata({ params }: { params: Promise<{ slug: string }> }): Promise<Metadata> {
  const p = post((await params).slug);
  if (!p) return {};
  return {
    title: p.title,
    description: p.description,
    alternates: { canonical: `/blog/${p.slug}` },
    openGraph: {
      type: "article",
      title: p.title,
      description: p.description,
      url: `/blog/${p.slug}`,
      publishedTime: p.date,
      authors: [p.author],
    },
  };
}

export default async function BlogPost({ params }: { params: Promise<{ slug: string }> }) {
  const p = post((await params).slug);
  if (!p) notFound();
  return (
    <main className="mx-auto max-w-3xl px-6 py-16">
      <JsonLd
        data={{
          "@context": "https://schema.org",
          "@type": "BlogPosting",
          headline: p.title,
          description: p.description,
          datePublished: p.date,
          author: { "@type": "Organization", name: p.author },
        }}
      />
      <nav aria-label="Breadcrumb" className="text-sm text-slate-600">
        <Link href="/blog" className="hover:underline">
          Blog
        </Link>
      </nav>
      <article>
        <header className="mt-4 border-b border-slate-200 pb-6">
          <h1 className="text-4xl font-semibold tracking-tight text-slate-900">{p.title}</h1>
          <p className="mt-3 text-sm text-slate-600">
            <time dateTime={p.date}>{p.date}</time> · {p.author} · {p.readingMinutes} min read
          </p>
        </header>
        <div className="article mt-8" dangerouslySetInnerHTML={{ __html: p.html }} />
      </article>
    </main>
  );
}
