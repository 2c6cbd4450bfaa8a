# tools/bundled.sh: sourced by ../configure when no installed libdirmn is
# used. Writes src/Makevars that builds the copy of libdirmn's sources under
# src/libdirmn into a static archive and links it into dirmn.so.
#
# Where the copy comes from: in the git tree src/libdirmn/capi and
# src/libdirmn/kernels are symbolic links to the library's own capi/ and
# kernels/; R CMD build copies the package with cp -LR (see
# tools:::.build_packages), following them, so the source tarball carries
# real files (the library's tests, bench and other bindings stay out).
#
# What it mirrors from CMakeLists.txt: the same source globs (capi/src,
# kernels, kernels/{cpu,math,models,table}, and kernels/cuda/*.cu or
# kernels/cuda_unavailable.cpp), C++17, DIRMN_BUILDING_LIBRARY, NDEBUG (R
# defines it, as a Release build does), hidden visibility, libmvec where it
# links (x86-64), and for CUDA nvcc -O3 with the same -gencode targets and
# cudart_static. What it does not: the
# compiler and its optimisation flags are R's (CXX17, CXX17FLAGS, as for
# every package, so -O2 where CMake's Release has -O3; no -march either way),
# and the library's -Werror warning set is left to its own CI.
#
# Visibility: the archive is linked with --exclude-libs, so none of its
# symbols (the dirmn_* C API included) leave dirmn.so; an installed libdirmn
# loaded into the same R process (by another package, or Julia through
# JuliaCall) neither interposes on it nor is interposed on.

bundled_fail() {
  cat >&2 <<EOF
------------------------------------------------------------------------
configure: ERROR: $1

No installed libdirmn was found (looked via ${SOURCE}), and the copy of
its sources that this package carries cannot be built.
$(cat "${tmpdir}/bundled.log" 2>/dev/null)
To use an installed libdirmn (>= 0.1) instead, build it with CMake
(cmake -S . -B build && cmake --build build && cmake --install build
--prefix PREFIX) and set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig or
DIRMN_HOME=PREFIX.
------------------------------------------------------------------------
EOF
  exit 1
}

# Runs "$@" with its output appended to bundled.log; the status is its.
bundled_try() {
  echo "+ $*" >> "${tmpdir}/bundled.log"
  "$@" >> "${tmpdir}/bundled.log" 2>&1
}

# Sets NVCC to the nvcc to try, or empty: $NVCC, CUDA_HOME, CUDA_PATH, PATH,
# then /usr/local/cuda (where CMakeLists.txt also looks).
bundled_find_nvcc() {
  if test -n "${NVCC}"; then return 0; fi
  for d in "${CUDA_HOME}" "${CUDA_PATH}"; do
    if test -n "${d}" && test -x "${d}/bin/nvcc"; then NVCC="${d}/bin/nvcc"; return 0; fi
  done
  NVCC=$(command -v nvcc 2>/dev/null || true)
  if test -z "${NVCC}" && test -x /usr/local/cuda/bin/nvcc; then NVCC=/usr/local/cuda/bin/nvcc; fi
}

# Sets CUDA_OK=yes and the CUDA_* make variables when nvcc compiles a kernel
# that R's C++ compiler then links, with cudart_static, into a shared object.
bundled_cuda() {
  CUDA_OK=no
  case "${DIRMN_CUDA:-auto}" in
    no|NO|off|OFF|false|FALSE|0) echo "configure: DIRMN_CUDA=${DIRMN_CUDA}: CPU backend only"; return 0 ;;
  esac
  bundled_find_nvcc
  if test -z "${NVCC}"; then
    CUDA_WHY="no nvcc (set NVCC or CUDA_HOME to use one)"
  else
    cuda_bin=$(cd "$(dirname "${NVCC}")" && pwd -P)
    cuda_root=$(dirname "${cuda_bin}")
    CUDA_LIBDIR=""
    for d in "${cuda_root}/lib64" "${cuda_root}/lib" "${cuda_root}"/targets/*/lib; do
      if test -f "${d}/libcudart_static.a"; then CUDA_LIBDIR="${d}"; break; fi
    done
    if test -z "${DIRMN_CUDA_GENCODE}"; then
      # As CMakeLists.txt: Hopper code (sm_90a from CUDA 12 on, sm_90 before)
      # and PTX that newer GPUs compile at load time.
      nvcc_major=$("${NVCC}" --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p')
      if test -n "${nvcc_major}" && test "${nvcc_major}" -lt 12; then
        DIRMN_CUDA_GENCODE="-gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75"
      else
        DIRMN_CUDA_GENCODE="-gencode arch=compute_90a,code=sm_90a -gencode arch=compute_75,code=compute_75"
      fi
    fi
    # nvcc's host compiler is R's, so that both sides share one C++ ABI.
    cxx_bin=$(echo "${CXX17}" | cut -d' ' -f1)
    cxx_path=$(command -v "${cxx_bin}" 2>/dev/null || true)
    CUDA_CCBIN=""
    if test -n "${cxx_path}"; then CUDA_CCBIN="-ccbin ${cxx_path}"; fi
    CUDA_FLAGS="-std=c++17 -O3 -DNDEBUG ${DIRMN_CUDA_GENCODE} ${CUDA_CCBIN} -Xcompiler=${CXX17PICFLAGS:--fpic},-fvisibility=hidden"
    CUDA_LIBS="-L${CUDA_LIBDIR} -lcudart_static -ldl -lrt"
    cat > "${tmpdir}/conftest_cuda.cu" <<'EOF'
#include <cuda_runtime.h>
__global__ void dirmn_conftest_kernel(double* x) { x[threadIdx.x] *= 2.0; }
extern "C" int dirmn_conftest(void) {
  int n = 0;
  dirmn_conftest_kernel<<<1, 1>>>(nullptr);
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : -1;
}
EOF
    # shellcheck disable=SC2086 # word splitting of the flags is intended
    if test -z "${CUDA_LIBDIR}"; then
      CUDA_WHY="no libcudart_static.a next to ${NVCC}"
    elif ! bundled_try "${NVCC}" ${CUDA_FLAGS} -c "${tmpdir}/conftest_cuda.cu" -o "${tmpdir}/conftest_cuda.o"; then
      CUDA_WHY="${NVCC} cannot compile a kernel with ${DIRMN_CUDA_GENCODE} ${CUDA_CCBIN} (see the log above)"
    elif ! bundled_try ${CXX17} ${CXX17STD} ${CXX17PICFLAGS} -shared ${R_LDFLAGS} "${tmpdir}/conftest_cuda.o" \
           -o "${tmpdir}/conftest_cuda.so" -Wl,--no-undefined ${CUDA_LIBS} -lpthread; then
      # --no-undefined only here: a shared object may leave symbols to the
      # process, but cudart_static's must all be satisfied by CUDA_LIBS.
      CUDA_WHY="cannot link cudart_static from ${CUDA_LIBDIR} into a shared object (see the log above)"
    else
      CUDA_OK=yes
    fi
  fi
  if test "${CUDA_OK}" = yes; then
    echo "configure: CUDA backend: ${NVCC} (${DIRMN_CUDA_GENCODE}), cudart_static from ${CUDA_LIBDIR}"
  else
    case "${DIRMN_CUDA:-auto}" in
      yes|YES|on|ON|true|TRUE|1) bundled_fail "DIRMN_CUDA=${DIRMN_CUDA} but the CUDA backend cannot be built: ${CUDA_WHY}." ;;
    esac
    if test -n "${NVCC}" && test -s "${tmpdir}/bundled.log"; then tail -n 20 "${tmpdir}/bundled.log"; fi
    echo "configure: CUDA backend not built: ${CUDA_WHY}; building the CPU backend only"
  fi
}

bundled_makevars() {
  : > "${tmpdir}/bundled.log"
  if test "${DIRMN_BUNDLED}" = no; then bundled_fail "DIRMN_BUNDLED=no"; fi
  if ! test -f src/libdirmn/capi/include/dirmn.h || ! test -f src/libdirmn/kernels/backend.hpp; then
    bundled_fail "src/libdirmn/capi and src/libdirmn/kernels are missing. In a git checkout they are symbolic links to the repository's capi/ and kernels/ (a checkout with core.symlinks=false has text files there instead: clone with symlinks, or build the package with R CMD build from such a clone)."
  fi
  CXX17=$("${RBIN}" CMD config CXX17)
  CXX17STD=$("${RBIN}" CMD config CXX17STD)
  CXX17FLAGS=$("${RBIN}" CMD config CXX17FLAGS)
  CXX17PICFLAGS=$("${RBIN}" CMD config CXX17PICFLAGS)
  if test -z "${CXX17}"; then
    bundled_fail "this R has no C++17 compiler configured (R CMD config CXX17 is empty); libdirmn needs C++17."
  fi
  cat > "${tmpdir}/conftest.cpp" <<'EOF'
#include <optional>
#include <thread>
int main() { std::optional<int> x = 1; std::thread t([] {}); t.join(); return *x - 1; }
EOF
  # shellcheck disable=SC2086
  if ! bundled_try ${CXX17} ${CXX17STD} ${CXX17FLAGS} "${tmpdir}/conftest.cpp" -o "${tmpdir}/conftest" ${R_LDFLAGS} -lpthread; then
    bundled_fail "${CXX17} ${CXX17STD} cannot compile and link a C++17 program with threads."
  fi

  # glibc's vector math library, as CMakeLists.txt finds it on x86-64.
  DEFS=""
  MVEC=""
  printf '#if !defined(__x86_64__)\n#error not x86-64\n#endif\nint main() { return 0; }\n' > "${tmpdir}/conftest_mvec.cpp"
  # shellcheck disable=SC2086
  if bundled_try ${CXX17} ${CXX17STD} ${CXX17FLAGS} "${tmpdir}/conftest_mvec.cpp" -o "${tmpdir}/conftest_mvec" ${R_LDFLAGS} -lmvec; then
    DEFS="-DDIRMN_HAVE_LIBMVEC=1"
    MVEC="-lmvec"
    echo "configure: vector logarithms from libmvec"
  fi

  # Keep the archive's symbols inside dirmn.so (GNU ld, gold, lld).
  printf 'extern "C" int dirmn_conftest_symbol(void) { return 1; }\n' > "${tmpdir}/conftest_sym.cpp"
  HIDE=""
  # shellcheck disable=SC2086
  if bundled_try ${CXX17} ${CXX17STD} ${CXX17PICFLAGS} -c "${tmpdir}/conftest_sym.cpp" -o "${tmpdir}/conftest_sym.o" &&
     bundled_try ar -rc "${tmpdir}/libconftest.a" "${tmpdir}/conftest_sym.o" &&
     bundled_try ${CXX17} ${CXX17STD} ${CXX17PICFLAGS} -shared -o "${tmpdir}/conftest_sym.so" \
       -Wl,--undefined=dirmn_conftest_symbol "${tmpdir}/libconftest.a" -Wl,--exclude-libs,ALL; then
    HIDE="-Wl,--exclude-libs,ALL"
  else
    echo "configure: WARNING: the linker has no --exclude-libs: the bundled dirmn_* symbols stay visible in dirmn.so"
  fi

  # The package's own objects keep R's -g, and their debug information (the
  # Rcpp templates of each entry point's file: 3.5 MB of dirmn.so's 5 MB)
  # would take the installed package over R CMD check's 5 MB: the linker
  # compresses it where it can (GNU ld >= 2.26, gold, lld; gdb and valgrind
  # read it compressed).
  printf 'int dirmn_conftest_debug(void) { return 1; }\n' > "${tmpdir}/conftest_z.cpp"
  ZDEBUG=""
  # shellcheck disable=SC2086
  if bundled_try ${CXX17} ${CXX17STD} ${CXX17PICFLAGS} -g -shared -o "${tmpdir}/conftest_z.so" \
       "${tmpdir}/conftest_z.cpp" -Wl,--compress-debug-sections=zlib; then
    ZDEBUG="-Wl,--compress-debug-sections=zlib"
  fi

  bundled_cuda

  objects=""
  for f in src/libdirmn/capi/src/*.cpp src/libdirmn/kernels/*.cpp src/libdirmn/kernels/cpu/*.cpp \
           src/libdirmn/kernels/math/*.cpp src/libdirmn/kernels/models/*.cpp src/libdirmn/kernels/table/*.cpp; do
    case "${f}" in
      */kernels/cuda_unavailable.cpp) continue ;;
    esac
    f=${f#src/}
    objects="${objects} ${f%.cpp}.o"
  done
  if test "${CUDA_OK}" = yes; then
    DEFS="${DEFS} -DDIRMN_HAVE_CUDA=1"
    for f in src/libdirmn/kernels/cuda/*.cu; do
      f=${f#src/}
      objects="${objects} ${f%.cu}.o"
    done
  else
    objects="${objects} libdirmn/kernels/cuda_unavailable.o"
    CUDA_LIBS=""
  fi
  n_objects=$(echo "${objects}" | wc -w | tr -d ' ')

  {
    echo "# Written by ../configure (tools/bundled.sh): libdirmn built from src/libdirmn."
    echo "CXX_STD = CXX17"
    echo "PKG_CPPFLAGS = -Ilibdirmn/capi/include -DDIRMN_BUILDING_LIBRARY ${DEFS}"
    echo "PKG_CXXFLAGS = \$(CXX_VISIBILITY)"
    echo "PKG_LIBS = libdirmn/libdirmn.a ${HIDE} ${ZDEBUG} ${CUDA_LIBS} ${MVEC} -lpthread"
    echo
    echo "DIRMN_OBJECTS =${objects}"
    echo
    echo "\$(SHLIB): libdirmn/libdirmn.a"
    echo
    echo "# q, not r: capi/src/fit.o and kernels/models/fit.o share a member name."
    echo "# The archive's debug information goes (R's own strip command for static"
    echo "# libraries, as R CMD INSTALL --strip-lib): with it dirmn.so is 9 MB, over"
    echo "# R CMD check's installed-size limit; without, 3.4 MB. DIRMN_KEEP_DEBUG=yes"
    echo "# keeps it."
    echo "libdirmn/libdirmn.a: \$(DIRMN_OBJECTS)"
    printf '\trm -f $@\n'
    printf '\t$(AR) -qc $@ $(DIRMN_OBJECTS)\n'
    if test "${DIRMN_KEEP_DEBUG:-no}" != yes; then
      printf '\tif test -n "$(STRIP_STATIC_LIB)"; then $(STRIP_STATIC_LIB) $@; fi\n'
    fi
    printf '\t$(RANLIB) $@\n'
    if test "${CUDA_OK}" = yes; then
      echo
      echo "DIRMN_NVCC = ${NVCC}"
      echo "DIRMN_NVCC_FLAGS = ${CUDA_FLAGS} \$(PKG_CPPFLAGS)"
      # One rule per file: R's Makeconf resets .SUFFIXES, so a .cu.o
      # suffix rule would not be seen, and pattern rules are GNU make's.
      for f in src/libdirmn/kernels/cuda/*.cu; do
        f=${f#src/}
        echo
        echo "${f%.cu}.o: ${f}"
        printf '\t$(DIRMN_NVCC) $(DIRMN_NVCC_FLAGS) -c %s -o $@\n' "${f}"
      done
    fi
  } > src/Makevars
  if test "${CUDA_OK}" = yes; then backends="CPU and CUDA backends"; else backends="CPU backend"; fi
  echo "configure: bundled libdirmn: ${n_objects} objects, ${backends}, compiled with ${CXX17} ${CXX17STD} and R's CXX17FLAGS"
}
