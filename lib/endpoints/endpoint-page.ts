import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { isAppError } from "@/lib/errors";
import { endpointSeries } from "./endpoint-metrics";
import { endpointSla } from "./endpoint-sla";
import { endpointJson, getEndpointOrThrow, listEndpointHistory } from "./endpoints";
import { endpointGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";

/** Everything an endpoint's page shows (the same figures the API serves), or null when the caller may not see it. */
export async function endpointPageData(p: Principal, id: string) {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const row = await getEndpointOrThrow(p, id).catch((e) => (isAppError(e) ? null : Promise.reject(e)));
  if (!row) return null;
  const [series, sla, history, tenant, gpuTelemetry] = await Promise.all([
    endpointSeries(p, id, {}),
    endpointSla(p, id, {}),
    listEndpointHistory(p, id),
    db().tenant.findUniqueOrThrow({ where: { id: row.tenantId }, select: { name: true } }),
    endpointGpuTelemetry(p, id, {}),
  ]);
  return { endpoint: endpointJson(row), series, sla, history, tenantName: tenant.name, gpuTelemetry };
}
