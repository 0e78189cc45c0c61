import { formatDuration } from "@/lib/billing/money";
import type { SlaReport } from "./sla";

/**
 * The window an SLA's figures cover, named: `rangeWords` ("last 24 hours"), or how long the
 * endpoint has served when that is shorter ("the 3 min since it first served").
 */
export function slaWindowWords(sla: Pick<SlaReport, "from" | "to" | "served_from">, rangeWords: string): string {
  if (!sla.served_from || Date.parse(sla.served_from) - Date.parse(sla.from) < 60_000) return rangeWords;
  return `the ${formatDuration(Date.parse(sla.to) - Date.parse(sla.served_from))} since it first served`;
}

// An endpoint's headline, pure: its status, and whether it meets its SLA now. The page showed a
// green "Ready" banner while the endpoint missed its latency target and a critical SLA alert fired
// (issue 32): serving is not the same as serving well, and the headline says both.

export interface Headline {
  tone: "green" | "amber" | "red" | "sky";
  /** "Ready", "Ready, missing its SLA" */
  title: string;
  text: string;
  /** which objectives are missed now, for the badge beside the status */
  missed: Array<"availability" | "latency">;
}

const pct = (v: number | null) => (v === null ? "—" : `${v.toFixed(v >= 99 ? 2 : 1)} %`);

/** What an SLA report misses, in words ("availability 98.50 % < 99.5 %", "p95 ≤ 450 ms in 78.0 % of minutes < 95 %"). */
function missedObjectives(sla: SlaReport): { missed: Headline["missed"]; words: string[] } {
  const missed: Headline["missed"] = [];
  const words: string[] = [];
  if (sla.compliant.availability === false) {
    missed.push("availability");
    words.push(`availability ${pct(sla.availability_pct)} against ${sla.targets.availability_pct} %`);
  }
  if (sla.compliant.p95 === false) {
    missed.push("latency");
    words.push(
      `p95 within ${sla.targets.p95_ms} ms in ${pct(sla.p95_compliance_pct)} of minutes against ${sla.targets.p95_objective_pct} %`,
    );
  }
  return { missed, words };
}

/**
 * `now`: the SLA over the window the alert rule checks (the freshest verdict), or the page's window
 * when no rule is enabled; `windowWords` names it. A firing SLA alert is a breach even when the
 * window has just turned compliant (the alert resolves at its next evaluation).
 */
export function endpointHeadline(e: {
  status: string;
  statusReason: string | null;
  now: SlaReport | null;
  windowWords: string;
  alertFiring: boolean;
}): Headline {
  const label = e.status.charAt(0).toUpperCase() + e.status.slice(1);
  const reason = e.statusReason ?? "";
  const serving = ["ready", "scaling", "degraded"].includes(e.status);
  const m = e.now && serving ? missedObjectives(e.now) : { missed: [], words: [] };
  if (serving && (m.missed.length || e.alertFiring)) {
    const what = m.words.length ? `${m.words.join("; ")}, ${e.windowWords}` : "its SLA alert is firing";
    return {
      tone: "red",
      title: `${label}, missing its SLA`,
      text: `${reason ? `${reason}, but ` : ""}${what}.`,
      missed: m.missed,
    };
  }
  const tone = e.status === "ready" ? "green" : e.status === "failed" || e.status === "degraded" ? "amber" : "sky";
  return { tone, title: label, text: reason, missed: [] };
}
