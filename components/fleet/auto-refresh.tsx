"use client";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";

/** Re-renders the server components of the page every few seconds while the tab is visible. */
export function AutoRefresh({ seconds = 10 }: { seconds?: number }) {
  const router = useRouter();
  const [at, setAt] = useState<string>();
  useEffect(() => {
    const tick = () => {
      if (document.visibilityState !== "visible") return;
      router.refresh();
      setAt(new Date().toLocaleTimeString("en-GB", { timeZone: "UTC" }));
    };
    const id = setInterval(tick, seconds * 1000);
    return () => clearInterval(id);
  }, [router, seconds]);
  return (
    <p className="flex items-center gap-2 text-xs text-slate-500" aria-live="off">
      <span aria-hidden className="h-2 w-2 animate-pulse rounded-full bg-emerald-500" />
      Live · refreshes every {seconds} s{at ? ` · updated ${at} UTC` : ""}
    </p>
  );
}
