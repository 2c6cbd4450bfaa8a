#!/usr/bin/env bash
# Provides a Julia for testing bindings/julia without a system install.
#
# Debian bookworm ships no Julia, but bullseye packages Julia 1.5.3. We fetch
# those .debs with apt (from a private list directory, so the machine's own
# apt state is untouched), unpack them with `dpkg -x` into a cache folder, and
# write a wrapper that runs julia with the unpacked libraries first on
# LD_LIBRARY_PATH. The work is skipped when the cache already holds a working
# Julia, so calling this repeatedly is cheap.
#
# Usage: scripts/setup-julia.sh        prints the path of the julia wrapper
# Env:   DIRMN_JULIA_CACHE             cache folder
#                                      (default ${XDG_CACHE_HOME:-$HOME/.cache}/dirmn-julia)
set -euo pipefail

CACHE="${DIRMN_JULIA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dirmn-julia}"
PREFIX="$CACHE/root"
WRAPPER="$CACHE/bin/julia"
ARCH_DIR=x86_64-linux-gnu

log() { echo "setup-julia: $*" >&2; }

if [ "$(dpkg --print-architecture 2>/dev/null)" != "amd64" ]; then
  log "only amd64 is supported (bullseye .debs are fetched for it)"
  exit 1
fi

# Julia 1.5.3's own libraries (LLVM 9, libgit2 1.1, mbedtls 2.16, ...) are
# bullseye-only. libunwind8 is too, although bookworm has the same soname:
# with bookworm's libunwind 1.6 every exception thrown from JIT-compiled code
# segfaults while unwinding, so bullseye's 1.3.2 is unpacked over it.
BULLSEYE_PKGS=(julia libjulia1 julia-common libllvm9 libgit2-1.1 libmbedtls12
  libmbedcrypto3 libmbedx509-0 libdsfmt-19937-1 libopenlibm3 libutf8proc2
  libhttp-parser2.9 libffi7 libunwind8)
# These are satisfied by bookworm's libraries of the same soname; Julia's
# julia/ folder reaches them through symlinks to ../, so they are linked into
# the unpacked lib folder.
SYSTEM_LIBS=(libpcre2-8.so.0 libssh2.so.1 libgmp.so.10 libcurl-gnutls.so.4 libmpfr.so.6)
SYSTEM_PKGS=(libpcre2-8-0 libssh2-1 libgmp10 libcurl3-gnutls libmpfr6)
# Found by the loader in the system folders; only installed when missing.
DEP_LIBS=(libz3.so.4 libedit.so.2 libpcre.so.3 libgfortran.so.5)
DEP_PKGS=(libz3-4 libedit2 libpcre3 libgfortran5)

# A Julia counts as working when it starts, loads the standard libraries the
# tests use, and survives an exception thrown from compiled code (the failure
# a wrong libunwind causes).
SMOKE='using Test, Libdl, LinearAlgebra, SparseArrays; f() = error("x"); try f() catch end; exit(0)'

find_system_lib() {
  local d
  for d in /usr/lib/$ARCH_DIR /lib/$ARCH_DIR /usr/lib /lib; do
    if [ -e "$d/$1" ]; then echo "$d/$1"; return 0; fi
  done
  return 1
}

if [ -x "$WRAPPER" ] && "$WRAPPER" --startup-file=no -e "$SMOKE" >/dev/null 2>&1; then
  echo "$WRAPPER"
  exit 0
fi

missing=()
for i in "${!SYSTEM_LIBS[@]}"; do
  find_system_lib "${SYSTEM_LIBS[$i]}" >/dev/null || missing+=("${SYSTEM_PKGS[$i]}")
done
for i in "${!DEP_LIBS[@]}"; do
  find_system_lib "${DEP_LIBS[$i]}" >/dev/null || missing+=("${DEP_PKGS[$i]}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing system libraries: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    log "need root to apt-get install ${missing[*]}"
    exit 1
  fi
  apt-get update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# Use the mirror host the machine already uses for bookworm, so the fetch works
# wherever the machine's own apt works.
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -e "$f" ] || continue
  if grep -qE '^Suites:.*\bbookworm\b' "$f"; then
    mirror=$(awk '/^URIs:/ {print $2; exit}' "$f")
    [ -n "$mirror" ] && break
  fi
done
if [ -z "$mirror" ]; then
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    mirror=$(awk '$1 == "deb" && $0 ~ / bookworm / {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' "$f")
    [ -n "$mirror" ] && break
  done
fi
mirror="${mirror:-http://deb.debian.org/debian}"
mirror="${mirror%/}"

APT_DIR="$CACHE/apt"
mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$APT_DIR/etc/sources.list.d" \
  "$APT_DIR/etc/preferences.d" "$CACHE/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bullseye main" \
  >"$APT_DIR/etc/sources.list"
# An empty dpkg status makes apt resolve every package from the bullseye list
# alone; with the real status it would pick the installed bookworm version of a
# library and then fail to find that version in bullseye.
APT_OPTS=(
  -o "Dir::Etc::sourcelist=$APT_DIR/etc/sources.list"
  -o "Dir::Etc::sourceparts=$APT_DIR/etc/sources.list.d"
  -o "Dir::Etc::preferencesparts=$APT_DIR/etc/preferences.d"
  -o "Dir::State::lists=$APT_DIR/lists"
  -o "Dir::State::status=/dev/null"
  -o "Dir::Cache=$APT_DIR/cache"
  -o "Debug::NoLocking=1"
  -o "APT::Get::List-Cleanup=0"
  -o "APT::Sandbox::User=root"
)

if ! ls "$APT_DIR/lists/"*bullseye*Packages* >/dev/null 2>&1; then
  log "fetching the bullseye package list from $mirror"
  apt-get "${APT_OPTS[@]}" update -qq >&2
fi

need=()
for p in "${BULLSEYE_PKGS[@]}"; do
  ls "$CACHE/debs/${p}_"*.deb >/dev/null 2>&1 || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
  log "downloading ${need[*]}"
  (cd "$CACHE/debs" && apt-get "${APT_OPTS[@]}" download "${need[@]}" >&2)
fi

rm -rf "$PREFIX.tmp"
mkdir -p "$PREFIX.tmp"
for deb in "$CACHE/debs/"*.deb; do
  dpkg -x "$deb" "$PREFIX.tmp"
done

# The julia/ subfolder holds symlinks such as julia/libgmp.so.10 -> ../libgmp.so.10;
# point the system libraries into the unpacked lib folder so they resolve.
LIBDIR="$PREFIX.tmp/usr/lib/$ARCH_DIR"
for l in "${SYSTEM_LIBS[@]}"; do
  src=$(find_system_lib "$l") || { log "system library $l not found"; exit 1; }
  ln -sf "$src" "$LIBDIR/$l"
done

rm -rf "$PREFIX"
mv "$PREFIX.tmp" "$PREFIX"

mkdir -p "$CACHE/bin"
cat >"$WRAPPER.tmp" <<EOF
#!/usr/bin/env bash
# Runs the Julia 1.5.3 unpacked by scripts/setup-julia.sh.
root="$PREFIX"
libdir="\$root/usr/lib/$ARCH_DIR"
export LD_LIBRARY_PATH="\$libdir:\$libdir/julia\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
# Keep package state out of the user's ~/.julia and away from the network.
export JULIA_DEPOT_PATH="\${JULIA_DEPOT_PATH:-$CACHE/depot}"
exec "\$root/usr/bin/julia" "\$@"
EOF
chmod +x "$WRAPPER.tmp"
mv "$WRAPPER.tmp" "$WRAPPER"

if ! "$WRAPPER" --startup-file=no -e "$SMOKE" >&2; then
  log "the unpacked Julia does not start; see the messages above"
  exit 1
fi
log "Julia $("$WRAPPER" --startup-file=no -e 'print(VERSION)') ready"
echo "$WRAPPER"
