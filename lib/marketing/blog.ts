import "server-only";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { marked } from "marked";
import sanitizeHtml from "sanitize-html";

// Blog posts are Markdown files in content/blog with a small front matter block. They are read
// and rendered at build time (the pages are static). The content is the repository's own, yet
// Markdown passes raw HTML through: the rendered HTML is sanitised to an allowlist of tags and
// attributes (no script, no event handlers, no javascript: links), so no future author — or a
// pasted snippet — can put script on the site.

export interface Post {
  slug: string;
  title: string;
  description: string;
  date: string;
  author: string;
  html: string;
  readingMinutes: number;
}

const DIR = path.join(process.cwd(), "content", "blog");

function parse(slug: string, raw: string): Post {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(raw);
  if (!m) throw new Error(`content/blog/${slug}.md has no front matter`);
  const meta = Object.fromEntries(m[1]!.split("\n").map((l) => [l.slice(0, l.indexOf(":")).trim(), l.slice(l.indexOf(":") + 1).trim()]));
  for (const k of ["title", "description", "date", "author"])
    if (!meta[k]) throw new Error(`content/blog/${slug}.md: front matter needs ${k}`);
  const body = m[2]!;
  return {
    slug,
    title: meta.title!,
    description: meta.description!,
    date: meta.date!,
    author: meta.author!,
    html: renderMarkdown(body),
    readingMinutes: Math.max(1, Math.round(body.split(/\s+/).length / 220)),
  };
}

const ALLOWED = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, "img", "h1", "h2"],
  allowedAttributes: { a: ["href", "title"], img: ["src", "alt", "title"], code: ["class"], th: ["align"], td: ["align"] },
  allowedSchemes: ["https", "http", "mailto"],
  allowedSchemesByTag: { img: ["https"] },
  allowProtocolRelative: false,
};

/** Markdown to HTML that is safe to put into a page as it is. */
export function renderMarkdown(markdown: string): string {
  return sanitizeHtml(marked.parse(markdown, { async: false }) as string, ALLOWED);
}

export function allPosts(): Post[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith(".md"))
    .map((f) => parse(f.replace(/\.md$/, ""), readFileSync(path.join(DIR, f), "utf8")))
    .sort((a, b) => b.date.localeCompare(a.date));
}

export function post(slug: string): Post | undefined {
  return allPosts().find((p) => p.slug === slug);
}
