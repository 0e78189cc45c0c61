import Link from "next/link";
import { retryNotificationAction } from "@/app/_actions/alerts";
import { DeliveryBadge } from "@/components/alerts/alert-badges";
import { AlertsNav } from "@/components/alerts/alerts-nav";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { InlineAction } from "@/components/forms/alert-forms";
import { ListToolbar, Pager } from "@/components/ui/list-toolbar";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { listNotificationsPage } from "@/lib/alerts/list-notifications";
import { notificationJson } from "@/lib/alerts/notification-json";
import { notificationListParams } from "@/lib/alerts/schemas";
import { listHref, readListParams } from "@/lib/http/list-params";
import { effectiveSettings } from "@/lib/settings/settings";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Notifications" };

const channelLabels: Record<string, string> = { email: "Email", webhook: "Webhook", console: "Console only" };

export default page({ plane: "operator", path: "/admin/alerts/notifications" }, async ({ principal: p, searchParams }) => {
  const q = readListParams(notificationListParams, searchParams);
  const page = await listNotificationsPage(p, q);
  const { notifications: n } = await effectiveSettings();
  const channels = [n.smtpUrl ? "email" : null, n.webhookUrl ? "webhook" : null].filter(Boolean);
  return (
    <>
      <PageHeader
        title="Notifications"
        description="Every alert announcement and how its delivery went. Failed deliveries are retried with backoff and kept until they are sent."
        actions={<AutoRefresh seconds={10} />}
      />
      <AlertsNav current="/admin/alerts/notifications" />
      <p className="mb-4 rounded-md bg-slate-100 px-4 py-2.5 text-sm text-slate-700">
        {channels.length
          ? `Delivering by ${channels.join(" and ")}. `
          : "No email server or webhook is set up: notifications are only listed here. "}
        <Link className="font-medium text-indigo-700 hover:underline" href="/admin/settings#notifications">
          {channels.length ? "Change channels or send a test" : "Set up a channel"}
        </Link>
      </p>
      <Card>
        <CardHeader title="Outbox" />
        <ListToolbar
          label="Filter notifications"
          base="/admin/alerts/notifications"
          values={q}
          search="Subject, recipient or error"
          selects={[
            {
              name: "status",
              label: "Delivery",
              options: [
                ["", "Any delivery"],
                ["pending", "Pending"],
                ["failed", "Failed"],
                ["sent", "Sent"],
              ],
            },
            {
              name: "channel",
              label: "Channel",
              options: [
                ["", "Any channel"],
                ["email", "Email"],
                ["webhook", "Webhook"],
                ["console", "Console only"],
              ],
            },
            {
              name: "kind",
              label: "About",
              options: [
                ["", "Anything"],
                ["firing", "Alert fired"],
                ["resolved", "Alert resolved"],
                ["demo_request", "Demo request"],
                ["account", "Account mail"],
              ],
            },
          ]}
          dates="Queued"
          sort={[
            ["newest", "Newest first"],
            ["oldest", "Oldest first"],
            ["attempts", "Most attempts"],
          ]}
          exportHref={listHref("/api/notifications/export", { ...q, page: undefined, per_page: undefined })}
        />
        {page.rows.length === 0 ? (
          <EmptyState title="No notifications match">
            Alerts of rules with notifications on are announced here when they fire and when they resolve.
          </EmptyState>
        ) : (
          <Table caption="Notifications">
            <thead className="bg-slate-50">
              <tr>
                <Th>Queued</Th>
                <Th>Message</Th>
                <Th>Channel</Th>
                <Th>Delivery</Th>
                <Th>Attempts</Th>
                <Th>
                  <span className="sr-only">Actions</span>
                </Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {page.rows.map(notificationJson).map((n) => (
                <tr key={n.id} className="align-top">
                  <Td>
                    <span title={formatDateTime(n.created_at)}>{formatRelative(n.created_at)}</span>
                  </Td>
                  <Td wrap className="max-w-xl">
                    <Link
                      href={
                        n.alert_id
                          ? `/admin/alerts?alert=${n.alert_id}`
                          : n.kind === "account"
                            ? `/admin/alerts/notifications/${n.id}`
                            : "/admin/demo-requests"
                      }
                      className="font-medium text-slate-900 hover:underline"
                    >
                      {n.subject}
                    </Link>
                    {n.last_error ? <p className="mt-0.5 text-xs text-red-700">Last error: {n.last_error}</p> : null}
                  </Td>
                  <Td>
                    {channelLabels[n.channel]}
                    <p className="text-xs text-slate-500">{n.target}</p>
                  </Td>
                  <Td>
                    <DeliveryBadge status={n.status} channel={n.channel} />
                    <p className="mt-1 text-xs text-slate-500">
                      {n.channel === "console"
                        ? "no channel configured"
                        : n.sent_at
                          ? `sent ${formatRelative(n.sent_at)}`
                          : n.next_attempt_at
                            ? `next try ${formatDateTime(n.next_attempt_at)}`
                            : ""}
                    </p>
                  </Td>
                  <Td className="tabular-nums">{n.attempts}</Td>
                  <Td className="text-right">
                    {n.status !== "sent" ? <InlineAction action={retryNotificationAction} fields={{ id: n.id }} label="Retry now" /> : null}
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <Pager page={q.page} perPage={q.per_page} total={page.total} href={(c) => listHref("/admin/alerts/notifications", q, c)} />
      </Card>
    </>
  );
});
