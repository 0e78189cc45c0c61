import { platform } from "@/lib/api/contracts";
import { listAuditLog } from "@/lib/audit/queries";
import { route } from "@/lib/http/route";

export const GET = route(platform.listAudit, async ({ principal, query, reply }) => reply(200, await listAuditLog(principal, query)));
