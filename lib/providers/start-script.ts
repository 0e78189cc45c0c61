// The start script a burst instance runs on first boot (pure): it installs our agent with the
// control plane's one-line installer (/install.sh, the same checked bundle every node installs)
// and starts it with the node-bound key the launch gave it. The variables come from the provider's
// own mechanism: RunPod's and Vast.ai's container environment, Lambda's user data (exported at the
// top of this script, lib/providers/lambda/adapter.ts). On a host with systemd the installer's unit
// runs the agent; in a container (no systemd, no docker) it is installed with --no-start and this
// script becomes the agent, registering without containers. The installer checks the bundle's
// Ed25519 signature against `signingKey`, the control plane's public key (lib/agent-install/signing-key).

export function startScript(signingKey: string): string {
  if (!/^[A-Za-z0-9+/=]+$/.test(signingKey)) throw new Error("startScript: the signing key is a base64 public key");
  return `#!/bin/sh
# GPUForge burst instance: install and start the node agent (GPUFORGE_URL, GPUFORGE_AGENT_KEY, GPUFORGE_HOSTNAME)
set -eu
: "\${GPUFORGE_URL:?}" "\${GPUFORGE_AGENT_KEY:?}" "\${GPUFORGE_HOSTNAME:?}"
# GPUFORGE_INSTALL_ROOT (image builds, tests): everything under that directory instead of /
ROOT="\${GPUFORGE_INSTALL_ROOT:-}"
umask 077
mkdir -p "$ROOT/root"
KEY_FILE="$ROOT/root/.gpuforge-agent.key"
printf '%s\\n' "$GPUFORGE_AGENT_KEY" > "$KEY_FILE"
INSTALLER="$ROOT/root/gpuforge-install.sh"
if command -v curl >/dev/null 2>&1; then
  curl -fsSL --retry 5 --retry-delay 3 "$GPUFORGE_URL/install.sh" -o "$INSTALLER"
elif command -v wget >/dev/null 2>&1; then
  wget -q -O "$INSTALLER" "$GPUFORGE_URL/install.sh"
else
  apt-get update -qq && apt-get install -y -qq curl ca-certificates >/dev/null && curl -fsSL "$GPUFORGE_URL/install.sh" -o "$INSTALLER"
fi
if [ -z "$ROOT" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  sh "$INSTALLER" --signing-key ${signingKey} --key-file "$KEY_FILE" --url "$GPUFORGE_URL" --hostname "$GPUFORGE_HOSTNAME"
  rm -f "$KEY_FILE"
  exit 0
fi
sh "$INSTALLER" --signing-key ${signingKey} --key-file "$KEY_FILE" --url "$GPUFORGE_URL" --hostname "$GPUFORGE_HOSTNAME" --no-start --allow-no-containers \${ROOT:+--root "$ROOT"}
rm -f "$KEY_FILE"
set -a
. "$ROOT/etc/gpuforge/agent.env"
set +a
AGENT_STATE_DIR="$ROOT\${AGENT_STATE_DIR:-/var/lib/gpuforge-agent}"
exec "$ROOT/opt/gpuforge-agent/current/bin/node" "$ROOT/opt/gpuforge-agent/current/agent.mjs"
`;
}
