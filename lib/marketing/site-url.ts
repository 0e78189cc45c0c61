import { env } from "@/lib/env";

/** The public site's origin for canonical URLs, the sitemap and Open Graph (NEXTAUTH_URL when set). */
export function siteUrl(): URL {
  return new URL(env().NEXTAUTH_URL ?? "http://localhost:3000");
}
