import "server-only";
import type { AgentPrincipal } from "@/lib/auth/principal";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { notFound, staleReport, validationFailed, type FieldIssue } from "@/lib/errors";
import { publishedPortProblem } from "@/lib/fleet/published-ports";
import { movePods } from "./move-pods";
import { podStatusOf, podTransition } from "./pod-lifecycle";
import type { ReportPodStatusInput } from "./schemas";
import { podContainerPorts } from "./ssh-key";
import { LOCK_REPORTED_POD, RECORD_POD_RUNNING } from "./statements";

/**
 * What a node's agent says about a pod's container, fenced like every agent report: the pod must
 * be placed on one of the agent's nodes (its node, for a node-bound key) under this very
 * placement (attempt and fence, compared under the pod's row lock in the transaction that
 * writes). `running` records the host ports it published (one for each of the pod's container
 * ports) and starts billing; `exited` ends the placement (failed, or placed again with
 * restart_on_failure); `stopped` confirms a stop. A report about another placement answers 409
 * stale_report and changes nothing; a pod this agent never ran answers 404.
 */
export async function reportPodStatus(p: AgentPrincipal, podId: string, input: ReportPodStatusInput) {
  const restart = await db().$transaction(async (tx) => {
    const rows = (await run(tx, LOCK_REPORTED_POD, [p.clusterId, p.nodeId ?? null, podId])).map((r) => ({
      ...r,
      status: podStatusOf(r.status),
    }));
    const pod = rows[0];
    // a pod this agent never ran is not its business; one that moved on since is a stale report
    if (!pod || !pod.ever_here) throw notFound("Pod");
    if (!pod.in_scope || pod.fence !== input.fence || pod.attempts !== input.attempt) throw staleReport();
    const c = txClient(tx);
    if (input.status === "running") {
      const t = podTransition(pod.status, { kind: "container_running" });
      if (!t.ok) throw staleReport("The pod is being stopped; its container must stop too");
      const ports = checkPorts(input.ports ?? [], podContainerPorts(pod.ports, pod.has_key));
      await run(c, RECORD_POD_RUNNING, [podId, input.attempt, JSON.stringify(ports)]);
      if (t.changed) await movePods(c, [{ id: podId, from: pod.status, to: t.to, reason: "its container is running" }], p.label);
      return false;
    }
    const event =
      input.status === "stopped" && pod.status === "stopping"
        ? { kind: "stop_confirmed" as const }
        : { kind: "lost" as const, restartOnFailure: pod.restart_on_failure };
    const t = podTransition(pod.status, event);
    if (!t.ok) throw staleReport();
    const why = input.error ? `: ${input.error.slice(0, 300)}` : input.exit_code !== undefined ? ` with code ${input.exit_code}` : "";
    const reason =
      pod.status === "stopping"
        ? "its node stopped the container"
        : t.to === "pending"
          ? `its container ended${why}; placed again (restart on failure)`
          : `its container ended${why}`;
    await movePods(c, [{ id: podId, from: pod.status, to: t.to, reason, exitCode: input.exit_code ?? null }], p.label);
    return t.to === "pending";
  });
  if (restart) await emitEvent("scheduler/run.requested", { reason: "pod restarting" });
  return { accepted: true };
}

/** One host port for each of the pod's container ports, no other, no host port twice, each in the agents' published range. */
function checkPorts(reported: Array<{ container_port: number; host_port: number }>, expected: number[]) {
  const issues: FieldIssue[] = [];
  const range = env().AGENT_PUBLISHED_PORTS;
  const seenContainer = new Set<number>();
  const seenHost = new Set<number>();
  reported.forEach((r, i) => {
    if (!expected.includes(r.container_port))
      issues.push({ path: `ports[${i}].container_port`, message: `Not a port of this pod (${expected.join(", ") || "none"})` });
    if (seenContainer.has(r.container_port)) issues.push({ path: `ports[${i}].container_port`, message: "Reported twice" });
    const outside = publishedPortProblem(r.host_port, range);
    if (outside) issues.push({ path: `ports[${i}].host_port`, message: outside });
    if (seenHost.has(r.host_port)) issues.push({ path: `ports[${i}].host_port`, message: "Published twice" });
    seenContainer.add(r.container_port);
    seenHost.add(r.host_port);
  });
  const missing = expected.filter((port) => !seenContainer.has(port));
  if (missing.length) issues.push({ path: "ports", message: `Missing host ports for ${missing.join(", ")}` });
  if (issues.length) throw validationFailed(issues);
  return expected.map((container_port) => ({
    container_port,
    host_port: reported.find((r) => r.container_port === container_port)!.host_port,
  }));
}
