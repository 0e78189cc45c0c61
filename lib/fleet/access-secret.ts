import "server-only";
import { createHmac } from "node:crypto";
import { authSecret } from "@/lib/env";

// The access secret of one placement's published ports (lib/fleet/workload-access.ts): a MAC over
// the placement (its kind, id and fence) under a key derived from the app's secret. Nothing is
// stored: the heartbeat hands it to the node's agent, and any gateway process with the same secret
// computes it for the replica or pod it routes to. A new placement (a replacement replica, a pod's
// next attempt) has a new fence and so a new secret; the old one opens nothing.

let cached: { secret: string; key: Buffer } | undefined;

function macKey(): Buffer {
  const secret = authSecret();
  if (cached?.secret !== secret) cached = { secret, key: createHmac("sha256", secret).update("gpuforge workload access v1").digest() };
  return cached.key;
}

export function workloadAccessSecret(kind: "replica" | "pod", id: string, fence: string): string {
  return createHmac("sha256", macKey()).update(`${kind}:${id}:${fence}`).digest("base64url");
}
