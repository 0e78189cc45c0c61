#!/bin/sh
# GPUForge node agent installer, served by the control plane at /install.sh:
#
#   curl -fsSL https://CONTROL_PLANE/install.sh | sudo sh -s -- --signing-key MCowBQYDK2VwAyEA… --key gf_…
#   curl -fsSL https://CONTROL_PLANE/install.sh | sudo sh -s -- --signing-key MCowBQYDK2VwAyEA… --key-file /root/gpuforge.key
#
# (--key-file keeps the key off the command line, where other users of the node can read it in the
# process list while the installer runs. The console shows the command with this control plane's
# --signing-key: the public half of the key the bundle is signed with.)
#
# The bundle is installed only when its Ed25519 signature checks out against --signing-key, which
# came with the command, not with the download: whoever can change what the server hands out cannot
# sign. The key is kept in /etc/gpuforge/bundle-signing.pub, so an upgrade without --signing-key is
# checked against the key of the first install.
#
# Installs the self-contained agent (its own Node.js runtime, nothing else needed) under
# /opt/gpuforge-agent, its configuration in /etc/gpuforge/agent.env (mode 0600: it holds the key),
# its state in /var/lib/gpuforge-agent (kept across upgrades) and a systemd unit that restarts it.
# Refuses, changing nothing, when the node lacks nvidia-smi or a container runtime. Run it again to
# upgrade: the key and the state stay unless --key names a new one.
#
# Options: --key KEY | --key-file FILE (required on first install)   --signing-key KEY (required on first install)
#          --url URL (default: the control plane that served this)
#          --ingest-url URL   --hostname NAME   --pod NAME   --rack NAME   --serve-image IMAGE
#          --root DIR (install under DIR instead of /, for image builds and tests)   --no-start
#          --allow-no-containers (a burst instance that is itself a container: no docker, the agent
#            registers without containers and runs only work that needs none; with --no-start, no systemd)
#
# The Slurm bridge, on a Slurm login or controller node, with an agent key of a cluster of kind slurm:
#   curl -fsSL https://CONTROL_PLANE/install.sh | sudo sh -s -- --slurm-bridge --signing-key MCowBQYDK2VwAyEA… --key-file /root/gpuforge.key \
#        --output-dir /shared/gpuforge --container oci --oci-bundles /shared/oci-bundles
# installs /opt/gpuforge-slurm-bridge, /etc/gpuforge/slurm-bridge.env and gpuforge-slurm-bridge.service instead; it
# needs Slurm's tools and a controller that answers, not nvidia-smi or docker. Its options: --output-dir DIR (a
# directory every compute node writes and this host reads), --container oci|pyxis|wrapper|none, --oci-bundles DIR,
# --wrapper PATH, --partitions LIST, --slurm-conf FILE, --user NAME (whom jobs run as; a Slurm operator, to drain).
set -eu

URL="__GPUFORGE_URL__"
KEY=""
SIGNING_KEY=""
INGEST_URL=""
NODE_NAME=""
POD=""
RACK=""
SERVE_IMAGE=""
ROOT="${GPUFORGE_INSTALL_ROOT:-}"
START=1
ALLOW_NO_CONTAINERS=0
KIND="agent"
OUTPUT_DIR=""
CONTAINER=""
OCI_BUNDLES=""
WRAPPER=""
PARTITIONS=""
SLURM_CONF_FILE=""
RUN_AS=""

fail() {
  echo "gpuforge-agent install: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --key) KEY="${2:-}"; shift 2 ;;
    --key-file)
      [ -r "${2:-}" ] || fail "--key-file: cannot read ${2:-(missing)}"
      read -r KEY < "$2" || true; shift 2 ;;
    --signing-key) SIGNING_KEY="${2:-}"; shift 2 ;;
    --url) URL="${2:-}"; shift 2 ;;
    --ingest-url) INGEST_URL="${2:-}"; shift 2 ;;
    --hostname) NODE_NAME="${2:-}"; shift 2 ;;
    --pod) POD="${2:-}"; shift 2 ;;
    --rack) RACK="${2:-}"; shift 2 ;;
    --serve-image) SERVE_IMAGE="${2:-}"; shift 2 ;;
    --root) ROOT="${2:-}"; shift 2 ;;
    --no-start) START=0; shift ;;
    --slurm-bridge) KIND="slurm-bridge"; shift ;;
    --output-dir) OUTPUT_DIR="${2:-}"; shift 2 ;;
    --container) CONTAINER="${2:-}"; shift 2 ;;
    --oci-bundles) OCI_BUNDLES="${2:-}"; shift 2 ;;
    --wrapper) WRAPPER="${2:-}"; shift 2 ;;
    --partitions) PARTITIONS="${2:-}"; shift 2 ;;
    --slurm-conf) SLURM_CONF_FILE="${2:-}"; shift 2 ;;
    --user) RUN_AS="${2:-}"; shift 2 ;;
    --allow-no-containers) ALLOW_NO_CONTAINERS=1; shift ;;
    -h|--help)
      echo "usage: install.sh --signing-key KEY --key gf_…|--key-file FILE [--url URL] [--ingest-url URL] [--hostname NAME] [--pod NAME] [--rack NAME] [--serve-image IMAGE] [--root DIR] [--no-start] [--allow-no-containers]"
      echo "       install.sh --slurm-bridge --signing-key KEY --key gf_…|--key-file FILE --output-dir DIR [--container oci|pyxis|wrapper|none] [--oci-bundles DIR] [--wrapper PATH] [--partitions LIST] [--slurm-conf FILE] [--user NAME] [--url URL] [--ingest-url URL] [--root DIR] [--no-start]"
      exit 0 ;;
    *) fail "unknown option $1 (see --help)" ;;
  esac
done

ROOT="${ROOT%/}"
OPT="$ROOT/opt/gpuforge-$KIND"
ETC="$ROOT/etc/gpuforge"
STATE="$ROOT/var/lib/gpuforge-$KIND"
UNIT="$ROOT/etc/systemd/system/gpuforge-$KIND.service"
ENV_FILE="$ETC/$KIND.env"
SIGNING_KEY_FILE="$ETC/bundle-signing.pub"

# __GPUFORGE_VERIFY_BUNDLE__

# --- what the node must have; nothing is changed before these pass ---------------------------
if [ -z "$ROOT" ] && [ "$(id -u)" != "0" ]; then fail "run as root (sudo sh -s -- …)"; fi
case "$URL" in http://*|https://*) ;; *) fail "--url must be the control plane's http(s) address" ;; esac
URL="${URL%/}"
case "$URL" in
  http://localhost*|http://127.*|http://\[::1\]*) ;;
  http://*) echo "gpuforge-agent install: warning: $URL is plain http: the agent key and every report cross the network unencrypted; use https in production" >&2 ;;
esac
if [ -n "$KEY" ]; then
  printf '%s' "$KEY" | grep -Eq '^gf_[A-Za-z0-9]{43}$' || fail "--key must be an agent key: gf_ followed by 43 letters and digits"
elif [ ! -f "$ENV_FILE" ]; then
  fail "--key is required on the first install (an agent key of the node's cluster: npm run key -- create --scope agent --cluster ID)"
fi
if [ -n "$SIGNING_KEY" ]; then
  printf '%s' "$SIGNING_KEY" | grep -Eq '^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=$' || fail "--signing-key must be the control plane's public key as the console shows it (MCowBQYDK2VwAyEA…)"
elif [ -f "$SIGNING_KEY_FILE" ]; then
  read -r SIGNING_KEY < "$SIGNING_KEY_FILE" || true
else
  fail "--signing-key is required on the first install: the control plane's public key, in the install command the console shows"
fi
for v in "$NODE_NAME" "$POD" "$RACK"; do
  case "$v" in *[!A-Za-z0-9._-]*) fail "--hostname, --pod and --rack take letters, digits, dot, dash and underscore" ;; esac
done
case "$SERVE_IMAGE$INGEST_URL" in *[[:space:]\"\'\$\`\\]*) fail "--serve-image and --ingest-url take no spaces, quotes or shell characters" ;; esac
[ "$(uname -s)" = "Linux" ] || fail "GPU nodes run Linux; this is $(uname -s)"
ARCH="$(uname -m)"
if [ "$KIND" = "slurm-bridge" ]; then
  for t in sinfo scontrol squeue sbatch scancel srun; do
    command -v "$t" >/dev/null 2>&1 || fail "$t not found: the Slurm bridge runs where Slurm's client tools are (a login or controller node)"
  done
  [ -z "$SLURM_CONF_FILE" ] || [ -r "$SLURM_CONF_FILE" ] || fail "--slurm-conf: cannot read $SLURM_CONF_FILE"
  SLURM_CONF="${SLURM_CONF_FILE:-${SLURM_CONF:-}}" scontrol ping 2>/dev/null | grep -q "is UP" || fail "scontrol ping: Slurm's controller does not answer from here"
  [ -n "$OUTPUT_DIR" ] || [ -f "$ENV_FILE" ] || fail "--output-dir is required: a directory every compute node writes jobs' output to and this host reads (a shared filesystem)"
  case "$CONTAINER" in ""|oci|pyxis|wrapper|none) ;; *) fail "--container takes oci, pyxis, wrapper or none" ;; esac
  [ "$CONTAINER" != "oci" ] || [ -n "$OCI_BUNDLES" ] || fail "--container oci needs --oci-bundles DIR, the images' OCI bundles"
  [ "$CONTAINER" != "wrapper" ] || [ -x "$WRAPPER" ] || fail "--container wrapper needs --wrapper PATH, an executable that runs IMAGE [command]"
  case "$OUTPUT_DIR$OCI_BUNDLES$WRAPPER$PARTITIONS$SLURM_CONF_FILE$RUN_AS" in *[[:space:]\"\'\$\`\\]*) fail "--output-dir, --oci-bundles, --wrapper, --partitions, --slurm-conf and --user take no spaces, quotes or shell characters" ;; esac
else
  command -v nvidia-smi >/dev/null 2>&1 || fail "nvidia-smi not found: install the NVIDIA driver first"
  nvidia-smi -L >/dev/null 2>&1 || fail "nvidia-smi cannot read the GPUs (driver not loaded?): $(nvidia-smi -L 2>&1 | head -n 1)"
  if [ "$ALLOW_NO_CONTAINERS" = "0" ]; then
    command -v docker >/dev/null 2>&1 || fail "no container runtime: install Docker Engine and the NVIDIA Container Toolkit (tenant work runs only in containers)"
    docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || fail "docker is installed but its engine does not answer: start it (systemctl start docker)"
  fi
fi
if [ "$START" = "1" ]; then command -v systemctl >/dev/null 2>&1 || fail "systemctl not found: the agent runs as a systemd service"; fi
if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL "$1" -o "$2"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q "$1" -O "$2"; }
else
  fail "neither curl nor wget found"
fi

# --- the agent itself ----------------------------------------------------------------------------
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
BUNDLE="$URL/install/$KIND-linux-$ARCH.tar.gz"
fetch "$BUNDLE" "$TMP/agent.tar.gz" || fail "could not download $BUNDLE (does this control plane serve $ARCH nodes?)"
fetch "$BUNDLE.sig" "$TMP/agent.tar.gz.sig" || fail "could not download the bundle's signature"
verify_bundle "$KIND" "$ARCH" "$TMP/agent.tar.gz" "$TMP/agent.tar.gz.sig" "$SIGNING_KEY" ||
  fail "the downloaded bundle is not signed by the key given (--signing-key): refusing to install it"
mkdir -p "$TMP/x"
tar -xzf "$TMP/agent.tar.gz" -C "$TMP/x"
VERSION="$(cat "$TMP/x/gpuforge-$KIND/VERSION")"
"$TMP/x/gpuforge-$KIND/bin/node" "$TMP/x/gpuforge-$KIND/$KIND.mjs" --version >/dev/null 2>&1 || fail "the downloaded $KIND does not run on this node"
mkdir -p "$OPT/releases"
rm -rf "$OPT/releases/$VERSION"
mv "$TMP/x/gpuforge-$KIND" "$OPT/releases/$VERSION"
ln -sfn "releases/$VERSION" "$OPT/current.new"
mv -T "$OPT/current.new" "$OPT/current"

# --- configuration (0600: it holds the key) and state (kept across upgrades) ---------------------
mkdir -p "$ETC" "$STATE"
chmod 0700 "$ETC" "$STATE"
# the key this install was checked against: upgrades are checked against it too
if [ ! -f "$SIGNING_KEY_FILE" ] || [ "$(cat "$SIGNING_KEY_FILE")" != "$SIGNING_KEY" ]; then
  [ -f "$SIGNING_KEY_FILE" ] && echo "gpuforge-agent install: the bundle signing key changed; keeping the new one" >&2
  printf '%s\n' "$SIGNING_KEY" > "$SIGNING_KEY_FILE.new"
  chmod 0644 "$SIGNING_KEY_FILE.new"
  mv "$SIGNING_KEY_FILE.new" "$SIGNING_KEY_FILE"
fi
if [ -n "$KEY" ] || [ ! -f "$ENV_FILE" ]; then
  umask 077
  if [ "$KIND" = "slurm-bridge" ]; then
    {
      echo "# GPUForge Slurm bridge, written by install.sh"
      echo "GPUFORGE_URL=$URL"
      echo "GPUFORGE_AGENT_KEY=$KEY"
      echo "SLURM_BRIDGE_STATE_DIR=/var/lib/gpuforge-slurm-bridge"
      echo "SLURM_OUTPUT_DIR=$OUTPUT_DIR"
      [ -n "$INGEST_URL" ] && echo "GPUFORGE_INGEST_URL=$INGEST_URL"
      [ -n "$CONTAINER" ] && echo "SLURM_CONTAINER=$CONTAINER"
      [ -n "$OCI_BUNDLES" ] && echo "SLURM_OCI_BUNDLES=$OCI_BUNDLES"
      [ -n "$WRAPPER" ] && echo "SLURM_CONTAINER_WRAPPER=$WRAPPER"
      [ -n "$PARTITIONS" ] && echo "SLURM_PARTITIONS=$PARTITIONS"
      [ -n "$SLURM_CONF_FILE" ] && echo "SLURM_CONF=$SLURM_CONF_FILE"
      true
    } > "$ENV_FILE.new"
  else
  {
    echo "# GPUForge node agent, written by install.sh"
    echo "GPUFORGE_URL=$URL"
    echo "GPUFORGE_AGENT_KEY=$KEY"
    echo "AGENT_STATE_DIR=/var/lib/gpuforge-agent"
    [ -n "$INGEST_URL" ] && echo "GPUFORGE_INGEST_URL=$INGEST_URL"
    [ -n "$NODE_NAME" ] && echo "GPUFORGE_HOSTNAME=$NODE_NAME"
    [ -n "$POD" ] && echo "GPUFORGE_POD=$POD"
    [ -n "$RACK" ] && echo "GPUFORGE_RACK=$RACK"
    [ -n "$SERVE_IMAGE" ] && echo "GPUFORGE_SERVE_IMAGE=$SERVE_IMAGE"
    true
  } > "$ENV_FILE.new"
  fi
  chmod 0600 "$ENV_FILE.new"
  mv "$ENV_FILE.new" "$ENV_FILE"
fi

mkdir -p "$(dirname "$UNIT")"
if [ "$KIND" = "slurm-bridge" ]; then
  [ -z "$RUN_AS" ] || chown "$RUN_AS" "$STATE" 2>/dev/null || true
  cat > "$UNIT" <<UNIT_EOF
[Unit]
Description=GPUForge Slurm bridge
Documentation=$URL/docs/slurm
After=network-online.target
Wants=network-online.target

[Service]
EnvironmentFile=/etc/gpuforge/slurm-bridge.env
ExecStart=/opt/gpuforge-slurm-bridge/current/bin/node /opt/gpuforge-slurm-bridge/current/slurm-bridge.mjs
${RUN_AS:+User=$RUN_AS}
Restart=always
RestartSec=5
# stop the bridge only: Slurm keeps running its jobs, and the next bridge process follows them
KillMode=process
TimeoutStopSec=15

[Install]
WantedBy=multi-user.target
UNIT_EOF
else
cat > "$UNIT" <<UNIT_EOF
[Unit]
Description=GPUForge node agent
Documentation=$URL/docs/agent
After=network-online.target docker.service
Wants=network-online.target
Requires=docker.service

[Service]
EnvironmentFile=/etc/gpuforge/agent.env
ExecStart=/opt/gpuforge-agent/current/bin/node /opt/gpuforge-agent/current/agent.mjs
Restart=always
RestartSec=5
# stop the agent only: the containers it runs keep running, and the next agent process adopts them
KillMode=process
TimeoutStopSec=15

[Install]
WantedBy=multi-user.target
UNIT_EOF
fi

if [ "$START" = "1" ]; then
  systemctl daemon-reload
  systemctl enable "gpuforge-$KIND" >/dev/null 2>&1 || systemctl enable "gpuforge-$KIND"
  systemctl restart "gpuforge-$KIND"
fi
echo "gpuforge-$KIND $VERSION installed in $OPT; configuration in $ENV_FILE; state in $STATE"
[ "$START" = "1" ] && echo "running: systemctl status gpuforge-$KIND · journalctl -u gpuforge-$KIND -f"
exit 0
