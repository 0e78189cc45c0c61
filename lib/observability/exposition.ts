import "server-only";
import { Registry } from "prom-client";
import { fleetRegistry } from "./fleet-gauges";
import { processMetrics } from "./process-metrics";

/** The Prometheus text exposition of this process: its own counters and histograms, and the fleet's gauges (`fleet: false` on the ingest server). */
export async function metricsExposition(opts: { fleet: boolean } = { fleet: true }): Promise<{ contentType: string; body: string }> {
  const own = processMetrics().registry;
  const registry = opts.fleet ? Registry.merge([own, await fleetRegistry()]) : own;
  return { contentType: registry.contentType, body: await registry.metrics() };
}
