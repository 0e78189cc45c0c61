"use client";
import { usePathname } from "next/navigation";
import { useEffect } from "react";

/**
 * First-party page views: one beacon per page, no cookies. Visitors with Do Not Track or Global
 * Privacy Control on send nothing (the server ignores those headers' requests too).
 */
export function PageViewTracker() {
  const pathname = usePathname();
  useEffect(() => {
    const nav = navigator as Navigator & { globalPrivacyControl?: boolean };
    if (nav.doNotTrack === "1" || nav.globalPrivacyControl) return;
    const body = JSON.stringify({ path: pathname, ...(document.referrer ? { referrer: document.referrer } : {}) });
    const blob = new Blob([body], { type: "application/json" });
    if (!navigator.sendBeacon?.("/api/analytics/pageview", blob)) {
      void fetch("/api/analytics/pageview", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        keepalive: true,
      }).catch(() => {});
    }
  }, [pathname]);
  return null;
}
