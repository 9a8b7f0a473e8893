#!/usr/bin/env bash
# Installs edge-gateway from this checkout as a systemd service.
# Safe to run again: an unchanged checkout leaves the installation untouched,
# and a changed one is swapped in and the running service restarted.
set -euo pipefail

readonly SERVICE=edge-gateway
readonly SERVICE_USER=edge-gateway
readonly STATE_DIR=/var/lib/edge-gateway
# python3 and make: gyp, for better-sqlite3's implicit node-gyp rebuild, which builds nothing when
# the package carries a binary for this platform (linux-x64, linux-arm64).
readonly APT_PACKAGES=(ffmpeg openssl python3 make)

usage() {
  cat <<'EOF'
Usage: sudo scripts/install-service.sh [--prefix DIR] [--no-start] [--help]

Builds this checkout and installs it as the edge-gateway systemd service:
  /opt/edge-gateway/                     code (dist/, config/, production node_modules) and,
                                         unless the system's node is 24 or newer, node/: Node.js
                                         from the npm registry's node-linux-<arch> package
  /etc/edge-gateway/config.yaml          created from config/default.yaml if absent; never overwritten
  /etc/systemd/system/edge-gateway.service
  /var/lib/edge-gateway                  data, created by systemd (StateDirectory=)
Also installs missing Debian packages (ffmpeg, openssl, python3, make, npm) and the system user
edge-gateway, then enables and starts the service when systemd is PID 1.

Options:
  --prefix DIR  put the files above under DIR instead of / (a staging root);
                packages and the user are still set up, systemctl is not run,
                and the unit and config keep their final absolute paths
  --no-start    install everything but do not run systemctl
  -h, --help    show this help
EOF
}

log() { printf '%s\n' "$*"; }
die() { printf 'install-service: %s\n' "$*" >&2; exit 1; }

prefix=""
start=1
while (($# > 0)); do
  case "$1" in
    --prefix)
      (($# >= 2)) || die "--prefix needs a directory"
      prefix=$2
      shift 2
      ;;
    --prefix=*)
      prefix=${1#--prefix=}
      shift
      ;;
    --no-start)
      start=0
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      usage >&2
      die "unknown option: $1"
      ;;
  esac
done

if [[ -n $prefix ]]; then
  [[ $prefix == /* ]] || die "--prefix must be an absolute path, got: $prefix"
  prefix=${prefix%/}
  # Files under a staging root are not where systemd looks for them.
  start=0
fi

((EUID == 0)) || die "run as root (sudo $0): it installs packages, a system user and a unit"

# Root's umask may be anything; the installed tree must be world-readable code.
umask 022

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app_dir=$prefix/opt/$SERVICE
conf_dir=$prefix/etc/$SERVICE
unit_dir=$prefix/etc/systemd/system
changed=0

# --- Debian packages ----------------------------------------------------------

packages=("${APT_PACKAGES[@]}")
# npm downloads the packages and, where the system's Node is older than 24, Node itself.
command -v npm >/dev/null || packages+=(npm)
missing=()
for pkg in "${packages[@]}"; do
  # dpkg -s also succeeds for removed packages whose config files remain.
  if [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]} > 0)); then
  log "installing Debian packages: ${missing[*]}"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
  log "unchanged: Debian packages ${packages[*]}"
fi

# --- Node.js ------------------------------------------------------------------

# shellcheck source=scripts/node-runtime.sh
. "$repo/scripts/node-runtime.sh"
# The system's node if it is new enough, else the pinned release fetched into the checkout's
# .runtime/ (as ./run does) and installed with the application as $app_dir/node.
node_bin=$(node_runtime_select "$repo/.runtime") || die "no Node.js >= $NODE_MIN_MAJOR (see docs/systemd.md)"
if [[ $node_bin == "$repo/.runtime/"* ]]; then
  bundled_node=$(dirname "$(dirname "$node_bin")")
  unit_node=/opt/$SERVICE/node/bin/node
else
  bundled_node=""
  unit_node=$node_bin
  case $(readlink -f "$node_bin") in
    /root/* | /home/* | /run/user/*)
      die "node at $node_bin lives in a home directory, which ProtectHome=yes hides from the service; remove it from PATH to use Node $NODE_PINNED_VERSION from the npm registry instead"
      ;;
  esac
fi
# npm, npx and the build's scripts all run on that node, and node-gyp uses its headers.
PATH="$(dirname "$node_bin"):$PATH"
if node_headers=$(node_runtime_headers_dir "$node_bin"); then
  export npm_config_nodedir=$node_headers
fi
log "node $("$node_bin" --version) at $node_bin (the service runs $unit_node)"

# --- Build --------------------------------------------------------------------

# The build needs the dev dependencies (typescript); production ones are pruned below.
log "building in $repo"
(cd "$repo" && npm ci --no-audit --no-fund && npm run build)
[[ -f $repo/dist/cli.js ]] || die "the build did not produce dist/cli.js"
[[ -f $repo/config/default.yaml ]] || die "config/default.yaml is missing from the checkout"

# --- System user --------------------------------------------------------------

if ! getent group "$SERVICE_USER" >/dev/null; then
  groupadd --system "$SERVICE_USER"
  log "created group $SERVICE_USER"
fi
if ! getent passwd "$SERVICE_USER" >/dev/null; then
  # No home is created: systemd makes $STATE_DIR (StateDirectory=) with the right owner.
  useradd --system --gid "$SERVICE_USER" --home-dir "$STATE_DIR" --no-create-home \
    --shell /usr/sbin/nologin --comment "edge-gateway daemon" "$SERVICE_USER"
  log "created user $SERVICE_USER"
else
  log "unchanged: user $SERVICE_USER"
fi

# --- Application tree ---------------------------------------------------------

# Everything is assembled away from the install locations, so a re-run with
# nothing new does not touch them at all (not even their directories' mtimes).
# /var/tmp, not /tmp: node_modules is large, and /tmp may be RAM (tmpfs).
work=$(mktemp -d "${TMPDIR:-/var/tmp}/$SERVICE-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/app
mkdir "$stage"
cp "$repo/package.json" "$repo/package-lock.json" "$stage/"
cp -R "$repo/dist" "$repo/config" "$stage/"
mkdir "$stage/docs"
cp "$repo/docs/systemd.md" "$stage/docs/"
if [[ -n $bundled_node ]]; then
  mkdir "$stage/node" "$stage/node/bin"
  cp "$bundled_node/bin/node" "$stage/node/bin/"
  cp "$bundled_node/LICENSE" "$stage/node/"
fi
# Native modules are built for one Node ABI and CPU.
"$node_bin" -p '["node-abi", process.versions.modules, process.platform, process.arch].join(" ")' >"$stage/.node-abi"

if [[ -d $app_dir/node_modules ]] &&
  cmp -s "$repo/package-lock.json" "$app_dir/package-lock.json" &&
  cmp -s "$stage/.node-abi" "$app_dir/.node-abi"; then
  cp -a "$app_dir/node_modules" "$stage/"
else
  # Copying the checkout's freshly built modules and pruning them avoids a
  # second native build (or prebuilt download) that `npm ci --omit=dev` would do.
  log "preparing production node_modules"
  cp -a "$repo/node_modules" "$stage/"
  (cd "$stage" && npm prune --omit=dev --no-audit --no-fund >/dev/null)
fi

# A checkout owned by a login user must not leave that user able to edit the
# code the service runs.
chown -R root:root "$stage"
chmod 0755 "$stage"

if [[ -d $app_dir ]] && diff -r -q "$stage" "$app_dir" >/dev/null 2>&1; then
  log "unchanged: $app_dir"
else
  mkdir -p "$(dirname "$app_dir")"
  # Fixed names, so a run interrupted here is cleaned up by the next one.
  rm -rf "$app_dir.new" "$app_dir.old"
  cp -a "$stage" "$app_dir.new"
  if [[ -d $app_dir ]]; then
    mv "$app_dir" "$app_dir.old"
  fi
  mv "$app_dir.new" "$app_dir"
  rm -rf "$app_dir.old"
  changed=1
  log "installed: $app_dir"
fi

# --- Configuration ------------------------------------------------------------

if [[ -e $conf_dir/config.yaml ]]; then
  log "unchanged: $conf_dir/config.yaml (existing configuration is never overwritten)"
else
  # Only the data_dir inside the top-level gateway: block, whatever its indentation.
  sed '/^gateway:/,/^[^[:space:]#]/ s|^\([[:space:]]\{1,\}data_dir:\).*$|\1 '"$STATE_DIR"'|' \
    "$repo/config/default.yaml" >"$work/config.yaml"
  grep -q "^[[:space:]]\{1,\}data_dir: $STATE_DIR\$" "$work/config.yaml" ||
    die "could not set gateway.data_dir in config/default.yaml's copy (no data_dir: line under gateway:)"
  mkdir -p "$conf_dir"
  # Readable by the service, writable by root only: it may hold camera passwords.
  install -o root -g "$SERVICE_USER" -m 0640 "$work/config.yaml" "$conf_dir/config.yaml"
  changed=1
  log "installed: $conf_dir/config.yaml"
fi

# --- Unit ---------------------------------------------------------------------

sed "s|^ExecStart=/opt/$SERVICE/node/bin/node |ExecStart=$unit_node |" "$repo/systemd/$SERVICE.service" >"$work/unit"
if cmp -s "$work/unit" "$unit_dir/$SERVICE.service"; then
  log "unchanged: $unit_dir/$SERVICE.service"
else
  mkdir -p "$unit_dir"
  install -o root -g root -m 0644 "$work/unit" "$unit_dir/$SERVICE.service"
  changed=1
  log "installed: $unit_dir/$SERVICE.service"
fi

# --- Start --------------------------------------------------------------------

if ((start == 0)); then
  log "not started (--no-start or --prefix). To start: systemctl daemon-reload && systemctl enable --now $SERVICE"
  exit 0
fi
# The check sd_booted(3) uses: this directory exists only when systemd is PID 1.
if [[ ! -d /run/systemd/system ]]; then
  log "installed, but systemd is not running as PID 1 here, so $SERVICE could not be started."
  log "On a systemd host: systemctl daemon-reload && systemctl enable --now $SERVICE"
  exit 0
fi
systemctl daemon-reload
if ((changed)) && systemctl is-active --quiet "$SERVICE"; then
  # enable --now leaves a running service alone; new code needs a restart.
  systemctl restart "$SERVICE" || die "$SERVICE failed to restart; see: journalctl -u $SERVICE -n 50"
  log "restarted $SERVICE"
fi
systemctl enable --now "$SERVICE" || die "$SERVICE failed to start; see: journalctl -u $SERVICE -n 50"
log "$SERVICE is $(systemctl is-active "$SERVICE" || true); logs: journalctl -u $SERVICE -f"
