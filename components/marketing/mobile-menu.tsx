"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useRef } from "react";

/** The public header's links on phones, behind a Menu button; it closes once a link is followed. */
export function MobileMenu({ links }: { links: Array<{ href: string; label: string }> }) {
  const ref = useRef<HTMLDetailsElement>(null);
  const pathname = usePathname();
  useEffect(() => {
    if (ref.current) ref.current.open = false;
  }, [pathname]);
  return (
    <details ref={ref} className="relative sm:hidden">
      <summary className="cursor-pointer list-none rounded-md px-2.5 py-2 ring-1 ring-slate-300 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600">
        Menu
      </summary>
      <ul className="absolute right-0 z-30 mt-2 w-44 rounded-lg bg-white py-1 shadow-lg ring-1 ring-slate-200">
        {links.map((l) => (
          <li key={l.href}>
            <Link href={l.href} className="block px-4 py-2 hover:bg-slate-50">
              {l.label}
            </Link>
          </li>
        ))}
      </ul>
    </details>
  );
}
