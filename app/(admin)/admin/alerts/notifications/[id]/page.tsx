import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { accountMailForOperator } from "@/lib/mail/account-mail-view";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Account mail" };

export default page(
  {
    plane: "operator",
    path: "/admin/alerts/notifications/[id]",
    ids: ["id"],
    load: ({ principal, ids }) => accountMailForOperator(principal, ids.id),
  },
  ({ data: m }) => (
    <>
      <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
        <Link href="/admin/alerts/notifications?kind=account" className="hover:underline">
          Notifications
        </Link>{" "}
        / <span aria-current="page">Account mail</span>
      </nav>
      <Card>
        <CardHeader
          title={m.subject}
          description={`To ${m.to} · queued ${formatDateTime(m.createdAt)}${m.sentAt ? ` · ${m.channel === "console" ? "listed here" : `sent ${formatDateTime(m.sentAt)}`}` : ""}`}
          actions={<Badge tone={m.channel === "console" ? "amber" : "green"}>{m.channel === "console" ? "console only" : m.status}</Badge>}
        />
        {m.channel === "console" ? (
          <p className="border-b border-slate-100 px-5 py-3 text-sm text-amber-900">
            No email server is configured, so this mail was not sent: pass it on to {m.to} yourself, or set one up under Settings →
            Notification channels.
          </p>
        ) : null}
        <pre className="whitespace-pre-wrap break-words p-5 font-sans text-sm text-slate-800">{m.text}</pre>
      </Card>
    </>
  ),
);
