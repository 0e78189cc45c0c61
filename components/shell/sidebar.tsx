"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useState } from "react";
import { cn } from "@/components/ui/cn";
import { NavLinks, type NavItem } from "./nav-links";

/**
 * The console's navigation: a fixed sidebar on wide screens; on phones and tablets a top bar whose
 * menu button opens the links (and closes on navigation or Escape), so the page starts on the page.
 */
export function Sidebar({ planeLabel, root, nav, logo }: { planeLabel: string; root: string; nav: NavItem[]; logo: React.ReactNode }) {
  const [open, setOpen] = useState(false);
  const pathname = usePathname();
  useEffect(() => setOpen(false), [pathname]);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setOpen(false);
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open]);
  return (
    <aside
      className="bg-slate-900 lg:sticky lg:top-0 lg:max-h-screen lg:overflow-y-auto print:hidden"
      aria-label={`${planeLabel} navigation`}
    >
      <div className="flex h-14 items-center justify-between gap-3 px-5 lg:h-16">
        <Link href={root} aria-label="GPUForge home">
          {logo}
        </Link>
        <span className="ml-auto rounded bg-white/10 px-1.5 py-0.5 text-[10px] font-semibold uppercase tracking-wider text-slate-300 lg:ml-0">
          {planeLabel}
        </span>
        <button
          type="button"
          className="-mr-2 rounded-md p-2 text-slate-200 hover:bg-white/10 focus-visible:outline-2 focus-visible:outline-white lg:hidden"
          aria-expanded={open}
          aria-controls="console-nav"
          onClick={() => setOpen((o) => !o)}
        >
          <span className="sr-only">{open ? "Close menu" : "Menu"}</span>
          <svg aria-hidden viewBox="0 0 24 24" className="h-6 w-6" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round">
            {open ? <path d="M6 6l12 12M18 6L6 18" /> : <path d="M4 7h16M4 12h16M4 17h16" />}
          </svg>
        </button>
      </div>
      <nav
        id="console-nav"
        aria-label={`${planeLabel} pages`}
        className={cn(open ? "block" : "hidden", "border-t border-white/10 px-3 pb-4 pt-2 lg:block lg:border-0 lg:pt-0")}
      >
        <NavLinks items={nav} root={root} />
      </nav>
    </aside>
  );
}
