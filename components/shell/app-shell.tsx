import Link from "next/link";
import { NavLinks, type NavItem } from "./nav-links";
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
    <div className="min-h-screen lg:pl-60 print:pl-0">
      <a href="#main" className="sr-only focus:not-sr-only focus:fixed focus:left-4 focus:top-4 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2">
        Skip to content
      </a>
      <aside className="bg-slate-900 lg:fixed lg:inset-y-0 lg:left-0 lg:w-60 print:hidden" aria-label={`${planeLabel} navigation`}>
        <div className="flex h-14 items-center justify-between px-5 lg:h-16">
          <Link href={root} aria-label="GPUForge home">
            <Logo />
          </Link>
          <span className="rounded bg-white/10 px-1.5 py-0.5 text-[10px] font-semibold uppercase tracking-wider text-slate-300">
            {planeLabel}
          </span>
        </div>
        <nav className="px-3 pb-4">
          <NavLinks items={nav} root={root} />
        </nav>
      </aside>
      <div>
        <header className="sticky top-0 z-10 flex h-16 print:hidden items-center justify-between border-b border-slate-200 bg-white/90 px-6 backdrop-blur">
          <p className="text-sm text-slate-500">{context}</p>
          <UserMenu {...user} />
        </header>
        <main id="main" className="mx-auto max-w-7xl px-6 py-8">
          {children}
        </main>
      </div>
    </div>
  );
}
