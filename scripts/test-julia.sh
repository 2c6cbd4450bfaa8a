#!/usr/bin/env bash
# Runs the Julia package's tests (bindings/julia/Dirmn) against an installed
# libdirmn.
#
# Usage: scripts/test-julia.sh PREFIX
#   PREFIX   where libdirmn was installed (cmake --install ... --prefix PREFIX);
#            the library is looked up in PREFIX/lib, PREFIX/lib64 and
#            PREFIX/lib/x86_64-linux-gnu
# Env:     JULIA              the julia to use; default: `julia` on the PATH,
#                             else the Julia 1.5.3 of scripts/setup-julia.sh
#
# The tests run from the package's directory with only the standard library
# on the load path, so nothing is fetched from a package registry. The output
# ends with "Dirmn.jl: N passed, N failed, N skipped"; the exit status is
# non-zero on any failure.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 PREFIX" >&2
  exit 2
fi
PREFIX="$(cd "$1" && pwd)"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/bindings/julia/Dirmn"

lib=""
for d in lib lib64 lib/x86_64-linux-gnu; do
  for name in libdirmn.so.0 libdirmn.so; do
    if [ -e "$PREFIX/$d/$name" ]; then lib="$PREFIX/$d/$name"; break 2; fi
  done
done
if [ -z "$lib" ]; then
  echo "test-julia: no libdirmn.so under $PREFIX/{lib,lib64,lib/x86_64-linux-gnu}" >&2
  exit 1
fi

julia="${JULIA:-}"
if [ -z "$julia" ]; then
  if command -v julia >/dev/null 2>&1; then
    julia="$(command -v julia)"
  else
    julia="$("$ROOT/scripts/setup-julia.sh")"
  fi
fi

echo "test-julia: $("$julia" --startup-file=no -e 'print("Julia ", VERSION)') with $lib"
export DIRMN_LIBRARY_PATH="$lib"
# "@" is the package's own project (so `using Dirmn` finds it), "@stdlib" the
# standard library it depends on; no user environment, no registry.
export JULIA_LOAD_PATH="@:@stdlib"
export JULIA_PKG_OFFLINE=true
exec "$julia" --startup-file=no --project="$PKG" "$PKG/test/runtests.jl"
