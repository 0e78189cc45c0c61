import Link from "next/link";
import { cn } from "@/components/ui/cn";

const tabs = [
  { href: "/admin/alerts", label: "Alerts" },
  { href: "/admin/alerts/rules", label: "Rules" },
  { href: "/admin/alerts/silences", label: "Silences" },
  { href: "/admin/alerts/notifications", label: "Notifications" },
  { href: "/admin/alerts/remediations", label: "Remediations" },
];

/** The alerting section's tabs; `current` is the active tab's href. */
export function AlertsNav({ current }: { current: string }) {
  return (
    <nav aria-label="Alerting" className="mb-6 flex gap-1 overflow-x-auto border-b border-slate-200">
      {tabs.map((t) => (
        <Link
          key={t.href}
          href={t.href}
          aria-current={t.href === current ? "page" : undefined}
          className={cn(
            "-mb-px border-b-2 px-3 py-2 text-sm font-medium focus-visible:outline-2 focus-visible:outline-indigo-600",
            t.href === current
              ? "border-indigo-600 text-indigo-700"
              : "border-transparent text-slate-600 hover:border-slate-300 hover:text-slate-900",
          )}
        >
          {t.label}
        </Link>
      ))}
    </nav>
  );
}
