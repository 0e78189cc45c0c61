/**
 * Which silence or maintenance window, if any, keeps an alert quiet (pure). A silence matches an
 * alert when every scope it names matches (rule, type, cluster, node, subject) and now lies in its
 * period and it was not ended early. Used before notifications are queued and when lists show
 * which alerts are silenced, so both always agree.
 */
export interface Silence {
  id: string;
  kind: string;
  ruleId: string | null;
  ruleType: string | null;
  clusterId: string | null;
  nodeId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  startsAt: Date;
  endsAt: Date;
  endedAt: Date | null;
}

export interface SilenceableAlert {
  ruleId: string | null;
  ruleType: string;
  clusterId: string | null;
  nodeId: string | null;
  subjectType: string;
  subjectId: string;
}

export function silenceState(s: Pick<Silence, "startsAt" | "endsAt" | "endedAt">, now: Date): "upcoming" | "active" | "expired" | "ended" {
  if (s.endedAt && s.endedAt <= now) return "ended";
  if (s.endsAt <= now) return "expired";
  return s.startsAt > now ? "upcoming" : "active";
}

export function silenceFor<S extends Silence>(alert: SilenceableAlert, silences: readonly S[], now: Date): S | null {
  for (const s of silences) {
    if (silenceState(s, now) !== "active") continue;
    if (s.ruleId && s.ruleId !== alert.ruleId) continue;
    if (s.ruleType && s.ruleType !== alert.ruleType) continue;
    // a node in a cluster under maintenance: the node's alerts carry the cluster id
    if (s.clusterId && s.clusterId !== alert.clusterId) continue;
    if (s.nodeId && s.nodeId !== alert.nodeId) continue;
    if (s.subjectId && (s.subjectType !== alert.subjectType || s.subjectId !== alert.subjectId)) continue;
    return s;
  }
  return null;
}
