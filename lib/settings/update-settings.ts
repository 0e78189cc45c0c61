import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { validationFailed } from "@/lib/errors";
import type { Prisma } from "@/lib/generated/prisma/client";
import { SETTING_KEYS, type SettingKey } from "./schemas";
import { sealSecret } from "./secret-box";
import { settingsKey } from "./settings";

/**
 * Stores console settings: a value sets the key, null removes the console's value (the
 * environment's applies again), undefined leaves it. Secrets are sealed before they reach the
 * database; the audit entry names what changed and never carries a secret.
 */
export async function updateSettings(actor: Actor, changes: Partial<Record<SettingKey, Prisma.InputJsonValue | null>>) {
  assertOperator(actor.principal);
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined) as Array<[SettingKey, Prisma.InputJsonValue | null]>;
  if (entries.length === 0) return { changed: [] as string[] };
  const key = settingsKey();
  for (const [name, value] of entries) {
    if (SETTING_KEYS[name].secret && value !== null && !key) {
      throw validationFailed([
        {
          path: name.split(".")[1]!,
          message:
            "This installation has no key to encrypt secrets with: set SETTINGS_ENCRYPTION_KEY at deploy time, or set this in the environment",
        },
      ]);
    }
  }
  const by = actor.principal.label;
  await db().$transaction(async (tx) => {
    for (const [name, value] of entries) {
      if (value === null) {
        await tx.platformSetting.deleteMany({ where: { key: name } });
        continue;
      }
      const data = SETTING_KEYS[name].secret
        ? {
            value: undefined,
            secretCiphertext: sealSecret(key!, name, typeof value === "string" ? value : JSON.stringify(value)),
            updatedBy: by,
            updatedAt: new Date(),
          }
        : { value, secretCiphertext: null, updatedBy: by, updatedAt: new Date() };
      await tx.platformSetting.upsert({ where: { key: name }, create: { key: name, ...data }, update: data });
    }
    await recordAudit(tx, actor, {
      action: "settings.updated",
      targetType: "settings",
      targetId: entries
        .map(([k]) => k.split(".")[0])
        .filter((v, i, a) => a.indexOf(v) === i)
        .join(","),
      details: Object.fromEntries(
        entries.map(([k, v]) => [k, v === null ? "removed (environment applies)" : SETTING_KEYS[k].secret ? "set (encrypted)" : v]),
      ),
    });
  });
  return { changed: entries.map(([k]) => k) };
}
