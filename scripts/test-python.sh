#!/usr/bin/env bash
# Runs the Python package's tests (bindings/python) against an installed
# libdirmn.
#
# Usage: scripts/test-python.sh PREFIX
#   PREFIX   where libdirmn was installed (cmake --install ... --prefix PREFIX);
#            the library is looked up in PREFIX/lib, PREFIX/lib64 and
#            PREFIX/lib/x86_64-linux-gnu
# Env:     DIRMN_PYTHON   the interpreter; default /usr/bin/python3 (Debian's,
#                         with python3-numpy, -scipy, -pytest, -mpmath and
#                         -torch from scripts/install-deps.sh test; the
#                         `python3` on a PATH may be another one without them)
#
# The package is imported from the source tree (PYTHONPATH), the header for
# tests/test_header.py read from PREFIX/include. Extra arguments after PREFIX
# go to pytest (e.g. -k loglik).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 PREFIX [pytest args...]" >&2
  exit 2
fi
PREFIX="$(cd "$1" && pwd)"
shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${DIRMN_PYTHON:-/usr/bin/python3}"

lib=""
for d in lib lib64 lib/x86_64-linux-gnu; do
  for name in libdirmn.so.0 libdirmn.so; do
    if [ -e "$PREFIX/$d/$name" ]; then lib="$PREFIX/$d/$name"; break 2; fi
  done
done
if [ -z "$lib" ]; then
  echo "test-python: no libdirmn.so under $PREFIX/{lib,lib64,lib/x86_64-linux-gnu}" >&2
  exit 1
fi

export DIRMN_LIBRARY_PATH="$lib"
if [ -f "$PREFIX/include/dirmn.h" ]; then
  export DIRMN_INCLUDE_DIR="$PREFIX/include"
fi
export PYTHONPATH="$ROOT/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
# No bytecode in the source tree, no user site-packages shadowing Debian's.
export PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
echo "test-python: $("$PY" --version 2>&1) with $lib"
cd "$ROOT"
exec "$PY" -m pytest -q -p no:cacheprovider bindings/python/tests "$@"
