import { platform } from "@/lib/api/contracts";
import { auditCsv } from "@/lib/audit/list-audit";
import { csvResponse, route } from "@/lib/http/route";

export const GET = route(platform.exportAuditLog, async ({ principal, query, send }) =>
  send(200, csvResponse("audit-log", await auditCsv(principal, query))),
);
