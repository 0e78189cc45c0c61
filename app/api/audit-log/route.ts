import { platform } from "@/lib/api/contracts";
import { listAuditLog } from "@/lib/audit/queries";
import { json, route } from "@/lib/http/route";

export const GET = route(platform.listAudit, async ({ principal, query }) => json(200, await listAuditLog(principal, query)));
