import { createHash } from "node:crypto";

// OpenSSH public keys as a pod takes them, pure (the control plane checks them at creation, the
// node agent again before it writes one into a container). One line `type base64 [comment]`:
// no authorized_keys options (command=, environment=, from= …), no second key, no control
// characters, and the base64 blob must decode to a key of the type it names. So nothing a tenant
// writes in this field can become an option, a second line or a different key on the node.

const SSH_KEY_TYPES = [
  "ssh-ed25519",
  "ssh-rsa",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
] as const;

const SSH_KEY_MAX_LENGTH = 16_384;
const COMMENT = /^[\x20-\x7e]{0,200}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,3}$/;

export type SshKeyCheck = { ok: true; key: string } | { ok: false; reason: string };

/** The key normalised to `type base64 [comment]`, or why it is not one. */
export function parseSshPublicKey(value: string): SshKeyCheck {
  const line = value.trim();
  if (line.length === 0) return { ok: false, reason: "Empty" };
  if (line.length > SSH_KEY_MAX_LENGTH) return { ok: false, reason: `At most ${SSH_KEY_MAX_LENGTH} characters` };
  // oxlint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(line)) return { ok: false, reason: "One line, without control characters (one key, no options)" };
  const [type, blob, ...rest] = line.split(/ +/);
  const comment = rest.join(" ");
  if (!(SSH_KEY_TYPES as readonly string[]).includes(type!)) {
    return {
      ok: false,
      reason: `Must start with the key type (${SSH_KEY_TYPES.slice(0, 3).join(", ")} …), without authorized_keys options`,
    };
  }
  if (!blob || !BASE64.test(blob)) return { ok: false, reason: "The key itself must follow its type, base64-encoded" };
  if (!COMMENT.test(comment)) return { ok: false, reason: "The comment is printable ASCII, at most 200 characters" };
  const decoded = Buffer.from(blob, "base64");
  // the blob starts with the key type again, as an SSH string (uint32 length + bytes)
  const named = decoded.length >= 4 ? decoded.subarray(4, 4 + decoded.readUInt32BE(0)).toString("latin1") : "";
  if (named !== type || decoded.length < 4 + named.length + 16) return { ok: false, reason: `The base64 part is not a ${type} key` };
  return { ok: true, key: comment ? `${type} ${blob} ${comment}` : `${type} ${blob}` };
}

/** OpenSSH's fingerprint of a key (`SHA256:…`, as `ssh-keygen -lf` prints it). */
export function sshKeyFingerprint(key: string): string {
  const blob = key.split(" ")[1] ?? "";
  return `SHA256:${createHash("sha256").update(Buffer.from(blob, "base64")).digest("base64").replace(/=+$/, "")}`;
}

/** The container ports a pod publishes: the ones asked for, plus 22 when it takes an SSH key; sorted, once each. */
export function podContainerPorts(ports: readonly number[], hasSshKey: boolean): number[] {
  return [...new Set([...ports, ...(hasSshKey ? [22] : [])])].sort((a, b) => a - b);
}
