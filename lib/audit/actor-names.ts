import "server-only";
import { db } from "@/lib/db/client";
import { isUuid } from "@/lib/ids";

/**
 * Who did it, as a person reads it: a user's name, an API key's name. Audit entries name their
 * actor by id; the timelines of jobs, endpoints and nodes by the label recorded at the time
 * ("ada@example.com", "key gf_4Yn1abcd…"). Both resolve here in one query per kind.
 */

const KEY_LABEL = /^key (gf_[0-9A-Za-z]{9})…?$/;

export interface ActorName {
  /** what to show: "Ada Lovelace", "key “ci-pipeline”" */
  name: string;
  /** what to show on hover: the email or the key prefix */
  detail: string | null;
}

export async function resolveActors(refs: {
  ids?: Array<string | null>;
  labels?: string[];
}): Promise<{ byId: Map<string, ActorName>; byLabel: Map<string, ActorName> }> {
  const ids = [...new Set((refs.ids ?? []).filter((x): x is string => Boolean(x && isUuid(x))))];
  const labels = [...new Set(refs.labels ?? [])];
  const prefixes = labels.map((l) => KEY_LABEL.exec(l)?.[1]).filter((x): x is string => Boolean(x));
  const emails = labels.filter((l) => l.includes("@") && !l.startsWith("key "));
  const [users, keys] = await Promise.all([
    ids.length || emails.length
      ? db().user.findMany({
          where: { OR: [{ id: { in: ids } }, { email: { in: emails } }] },
          select: { id: true, name: true, email: true },
        })
      : [],
    ids.length || prefixes.length
      ? db().apiKey.findMany({
          where: { OR: [{ id: { in: ids } }, { prefix: { in: prefixes } }] },
          select: { id: true, name: true, prefix: true, scope: true },
        })
      : [],
  ]);
  const keyName = (k: { name: string; prefix: string; scope: string }): ActorName => ({
    name: `${k.scope === "agent" ? "agent key" : "key"} “${k.name}”`,
    detail: `${k.prefix}…`,
  });
  const byId = new Map<string, ActorName>([
    ...users.map((u): [string, ActorName] => [u.id, { name: u.name, detail: u.email }]),
    ...keys.map((k): [string, ActorName] => [k.id, keyName(k)]),
  ]);
  const byLabel = new Map<string, ActorName>();
  for (const u of users) byLabel.set(u.email, { name: u.name, detail: u.email });
  for (const k of keys) byLabel.set(`key ${k.prefix}…`, keyName(k));
  return { byId, byLabel };
}

/** A label as a name where one is known ("system", "scheduler" and unknown labels stay as they are). */
export function displayActor(byLabel: Map<string, ActorName>, label: string): string {
  return byLabel.get(label)?.name ?? label;
}
