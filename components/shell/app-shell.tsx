import { Suspense } from "react";
import type { NavItem } from "./nav-links";
import { NavigationProgress } from "./navigation-progress";
import { Sidebar } from "./sidebar";
import { UserMenu } from "./user-menu";

export function Logo({ className = "text-white" }: { className?: string }) {
  return (
    <span className={`flex items-center gap-2 font-semibold tracking-tight ${className}`}>
      <svg aria-hidden viewBox="0 0 24 24" className="h-6 w-6">
        <rect x="2" y="2" width="20" height="20" rx="5" className="fill-indigo-500" />
        <path d="M7 8h10M7 12h10M7 16h6" className="stroke-white" strokeWidth="2" strokeLinecap="round" />
      </svg>
      GPUForge
    </span>
  );
}

export function AppShell({
  planeLabel,
  root,
  nav,
  user,
  context,
  children,
}: {
  planeLabel: string;
  root: string;
  nav: NavItem[];
  user: { name: string; email: string; roleLabel: string };
  context?: string;
  children: React.ReactNode;
}) {
  return (
    // Two columns on wide screens: the dark column stretches with the page however long it gets,
    // and the navigation inside it stays in view (sticky) while the page scrolls.
    <div className="min-h-screen lg:flex">
      <Suspense fallback={null}>
        <NavigationProgress />
      </Suspense>
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:fixed focus:left-4 focus:top-4 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2"
      >
        Skip to content
      </a>
      <div className="bg-slate-900 lg:w-60 lg:shrink-0 print:hidden">
        <Sidebar planeLabel={planeLabel} root={root} nav={nav} logo={<Logo />} />
      </div>
      <div className="min-w-0 lg:flex-1">
        <header className="sticky top-0 z-10 flex h-14 items-center justify-between gap-3 border-b border-slate-200 bg-white/90 px-4 backdrop-blur sm:px-6 lg:h-16 print:hidden">
          <p className="truncate text-sm text-slate-500">{context}</p>
          <UserMenu {...user} accountHref={`${root}/account`} />
        </header>
        <main id="main" tabIndex={-1} className="mx-auto max-w-7xl px-4 py-6 focus:outline-none sm:px-6 sm:py-8">
          {children}
        </main>
      </div>
    </div>
  );
}
