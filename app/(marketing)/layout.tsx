import Link from "next/link";
import { GoogleAnalytics } from "@/components/marketing/google-analytics";
import { MobileMenu } from "@/components/marketing/mobile-menu";
import { PageViewTracker } from "@/components/marketing/page-view-tracker";
import { Logo } from "@/components/shell/app-shell";
import { USE_CASES } from "@/content/use-cases";
import { headers } from "next/headers";
import { NONCE_HEADER } from "@/lib/http/security-headers";

export default async function MarketingLayout({ children }: { children: React.ReactNode }) {
  const nonce = (await headers()).get(NONCE_HEADER) ?? undefined;
  return (
    <div className="min-h-screen bg-white">
      <a
        href="#content"
        className="sr-only focus:not-sr-only focus:fixed focus:left-4 focus:top-4 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2"
      >
        Skip to content
      </a>
      <header className="border-b border-slate-200">
        <div className="mx-auto flex h-16 max-w-6xl items-center justify-between px-6">
          <Link href="/" aria-label="GPUForge home">
            <Logo className="text-slate-900" />
          </Link>
          <nav aria-label="Main" className="flex items-center gap-5 text-sm font-medium text-slate-700">
            <Link href="/use-cases" className="hidden hover:text-slate-900 sm:inline">
              Use cases
            </Link>
            <Link href="/blog" className="hidden hover:text-slate-900 sm:inline">
              Blog
            </Link>
            <Link href="/docs" className="hidden hover:text-slate-900 sm:inline">
              Docs
            </Link>
            <MobileMenu
              links={[
                { href: "/use-cases", label: "Use cases" },
                { href: "/blog", label: "Blog" },
                { href: "/docs", label: "Docs" },
              ]}
            />
            <Link href="/signup" className="hidden hover:text-slate-900 sm:inline">
              Sign up
            </Link>
            <Link href="/login" className="rounded-md bg-slate-900 px-3.5 py-2 text-white hover:bg-slate-700">
              Sign in
            </Link>
          </nav>
        </div>
      </header>
      <div id="content">{children}</div>
      <footer className="border-t border-slate-200 bg-slate-50">
        <div className="mx-auto grid max-w-6xl gap-8 px-6 py-12 text-sm sm:grid-cols-3">
          <div>
            <Logo className="text-slate-900" />
            <p className="mt-3 text-slate-600">
              The control plane for GPU clouds: fleet, scheduling, billing and self-healing in one place.
            </p>
          </div>
          <nav aria-label="Use cases">
            <p className="font-semibold text-slate-900">Use cases</p>
            <ul className="mt-3 space-y-2">
              {USE_CASES.map((u) => (
                <li key={u.slug}>
                  <Link className="text-slate-600 hover:text-slate-900" href={`/use-cases/${u.slug}`}>
                    {u.title}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <nav aria-label="Resources">
            <p className="font-semibold text-slate-900">Resources</p>
            <ul className="mt-3 space-y-2">
              <li>
                <Link className="text-slate-600 hover:text-slate-900" href="/docs">
                  Documentation
                </Link>
              </li>
              <li>
                <Link className="text-slate-600 hover:text-slate-900" href="/docs/api">
                  API reference
                </Link>
              </li>
              <li>
                <Link className="text-slate-600 hover:text-slate-900" href="/blog">
                  Engineering blog
                </Link>
              </li>
              <li>
                <Link className="text-slate-600 hover:text-slate-900" href="/login">
                  Demo console
                </Link>
              </li>
            </ul>
          </nav>
        </div>
      </footer>
      <PageViewTracker />
      <GoogleAnalytics nonce={nonce} />
    </div>
  );
}
