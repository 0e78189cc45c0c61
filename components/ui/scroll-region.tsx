"use client";
import { useEffect, useRef, useState } from "react";

/**
 * A box that scrolls sideways when its content is wider (a wide table, a phone). While it does, it
 * is a named region in the tab order, so a keyboard user can scroll it (WCAG 2.1.1; axe's
 * scrollable-region-focusable); while everything fits it adds no tab stop.
 */
export function ScrollRegion({ label, className, children }: { label: string; className?: string; children: React.ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setScrolls(el.scrollWidth > el.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    for (const child of Array.from(el.children)) observer.observe(child);
    return () => observer.disconnect();
  }, []);
  return (
    <div
      ref={ref}
      className={`${className ?? ""} focus-visible:outline-2 focus-visible:outline-indigo-600`.trim()}
      {...(scrolls ? { tabIndex: 0, role: "region", "aria-label": label } : {})}
    >
      {children}
    </div>
  );
}
