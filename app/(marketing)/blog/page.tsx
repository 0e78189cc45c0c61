import Link from "next/link";
import { allPosts } from "@/lib/marketing/blog";

export const metadata = {
  title: "Engineering blog",
  description: "How GPUForge works: event-driven scheduling, per-second billing in integer cents, capped automatic quarantine.",
  alternates: { canonical: "/blog" },
};

export default function BlogIndex() {
  const posts = allPosts();
  return (
    <main className="mx-auto max-w-3xl px-6 py-16">
      <h1 className="text-4xl font-semibold tracking-tight text-slate-900">Engineering blog</h1>
      <p className="mt-4 text-lg text-slate-700">How the control plane works, with the figures behind it.</p>
      <ul className="mt-10 divide-y divide-slate-200">
        {posts.map((p) => (
          <li key={p.slug} className="py-6">
            <p className="text-sm text-slate-600">
              <time dateTime={p.date}>{p.date}</time> · {p.readingMinutes} min read
            </p>
            <h2 className="mt-1 text-xl font-semibold text-slate-900">
              <Link href={`/blog/${p.slug}`} className="hover:underline">
                {p.title}
              </Link>
            </h2>
            <p className="mt-2 text-slate-700">{p.description}</p>
          </li>
        ))}
      </ul>
    </main>
  );
}
