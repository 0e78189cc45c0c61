import type { MetadataRoute } from "next";
import { USE_CASES } from "@/content/use-cases";
import { allPosts } from "@/lib/marketing/blog";
import { siteUrl } from "@/lib/marketing/site-url";

export default function sitemap(): MetadataRoute.Sitemap {
  const base = siteUrl();
  const at = (path: string) => new URL(path, base).toString();
  return [
    { url: at("/"), changeFrequency: "weekly", priority: 1 },
    { url: at("/use-cases"), changeFrequency: "monthly", priority: 0.8 },
    ...USE_CASES.map((u) => ({ url: at(`/use-cases/${u.slug}`), changeFrequency: "monthly" as const, priority: 0.8 })),
    { url: at("/blog"), changeFrequency: "weekly", priority: 0.6 },
    ...allPosts().map((p) => ({ url: at(`/blog/${p.slug}`), lastModified: p.date, changeFrequency: "yearly" as const, priority: 0.6 })),
    { url: at("/docs"), changeFrequency: "monthly", priority: 0.7 },
    { url: at("/docs/agent"), changeFrequency: "monthly", priority: 0.6 },
    { url: at("/docs/slurm"), changeFrequency: "monthly", priority: 0.6 },
    { url: at("/docs/self-hosting"), changeFrequency: "monthly", priority: 0.6 },
    { url: at("/docs/api"), changeFrequency: "weekly", priority: 0.6 },
  ];
}
