import "server-only";
import { createHmac, timingSafeEqual } from "node:crypto";
import { authSecret } from "@/lib/env";

// The credential a serving container gets instead of the agent key: it names one replica and is a
// MAC over that replica's placement (its id and fence), so it lets the container post its own
// replica's samples and nothing else, and it dies with the placement (a replacement replica has a
// new id and fence). Nothing is stored: any app or ingest process with the same secret verifies it.

const PREFIX = "gfw_";
const FORMAT = /^gfw_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

function macKey(): Buffer {
  return createHmac("sha256", authSecret()).update("gpuforge replica report tokens v1").digest();
}

/** The MAC over one placement (`replica:<id>:<fence>`, `job:<id>:<attempt>:<fence>`): workload tokens of every kind. */
export function placementMac(subject: string): Buffer {
  return createHmac("sha256", macKey()).update(subject).digest();
}

function mac(replicaId: string, fence: string): Buffer {
  return placementMac(`replica:${replicaId}:${fence}`);
}

export function replicaReportToken(replicaId: string, fence: string): string {
  return `${PREFIX}${replicaId.replaceAll("-", "")}_${mac(replicaId, fence).toString("base64url")}`;
}

export function looksLikeReplicaToken(token: string): boolean {
  return token.startsWith(PREFIX);
}

/** The replica a token claims to speak for, or null when it is not a token of this shape. */
export function replicaOfToken(token: string): string | null {
  const m = FORMAT.exec(token);
  if (!m) return null;
  const h = m[1]!;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function tokenMatches(token: string, replicaId: string, fence: string): boolean {
  const m = FORMAT.exec(token);
  if (!m) return false;
  const given = Buffer.from(m[2]!, "base64url");
  const expected = mac(replicaId, fence);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
