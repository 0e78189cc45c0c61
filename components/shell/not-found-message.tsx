"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { buttonClass } from "@/components/ui/button";

// What a 404 says, by where it was asked. It reads the path in the browser (as the 403 page does),
// so the not-found pages stay static and their status stays the 404 Next gives them.

/** A console path's object kind and the list it belongs to: "/admin/jobs/<id>" → a job, the queue. */
const KINDS: Array<{ segment: string; noun: string; list: string; listLabel: string }> = [
  { segment: "jobs", noun: "job", list: "jobs", listLabel: "the queue" },
  { segment: "nodes", noun: "node", list: "clusters", listLabel: "the clusters" },
  { segment: "clusters", noun: "cluster", list: "clusters", listLabel: "the clusters" },
  { segment: "tenants", noun: "tenant", list: "tenants", listLabel: "the tenants" },
  { segment: "endpoints", noun: "endpoint", list: "endpoints", listLabel: "the endpoints" },
  { segment: "pods", noun: "pod", list: "pods", listLabel: "the pods" },
  { segment: "pipelines", noun: "pipeline", list: "pipelines", listLabel: "the pipelines" },
  { segment: "reservations", noun: "reservation", list: "reservations", listLabel: "the reservations" },
  { segment: "invoices", noun: "invoice", list: "billing", listLabel: "billing" },
  { segment: "rules", noun: "alert rule", list: "alerts/rules", listLabel: "the alert rules" },
];

export function describeMissing(path: string): { title: string; body: string; href: string; label: string } {
  const [plane, ...rest] = path.split("/").filter(Boolean);
  const root = plane === "admin" ? "/admin" : plane === "dashboard" ? "/dashboard" : "/";
  const kind = [...rest].reverse().find((s) => KINDS.some((k) => k.segment === s));
  const k = KINDS.find((x) => x.segment === kind);
  if (root === "/")
    return {
      title: "This page does not exist",
      body: "The address may be mistyped, or the page has moved.",
      href: "/",
      label: "Go to the home page",
    };
  if (!k)
    return {
      title: "This page does not exist",
      body: "The address may be mistyped, or the page has moved.",
      href: root,
      label: "Back to the overview",
    };
  const tenantWords = root === "/dashboard" ? " or it belongs to another organisation" : "";
  return {
    title: `No such ${k.noun}`,
    body: `Nothing here has this id: it may have been deleted, the link may be mistyped${tenantWords}.`,
    href: `${root}/${k.list}`,
    label: `Back to ${k.listLabel}`,
  };
}

export function NotFoundMessage() {
  const m = describeMissing(usePathname() ?? "/");
  return (
    <div className="flex flex-col items-center justify-center gap-3 px-6 py-16 text-center" data-testid="not-found">
      <p className="text-sm font-semibold text-indigo-600">404</p>
      <h1 className="text-2xl font-semibold text-slate-900">{m.title}</h1>
      <p className="max-w-md text-slate-600">{m.body}</p>
      <Link href={m.href} className={buttonClass("primary", "md", "mt-2")}>
        {m.label}
      </Link>
    </div>
  );
}
