# Sourced by ci/sanitize.sh and ci/fuzz.sh: the one clang build that serves both, ASan + UBSan
# with libFuzzer's coverage instrumentation (MTPERF_FUZZ), the tests and the fuzz targets in the
# same folder, so the libraries are compiled once for the sanitized suite and for the fuzzers.
#
# -O0: clang's -O1 doubles this build's time (measured: 17 CPU minutes against 9) and saves
# only half a minute of the tests'; a long fuzz run is worth an optimized folder of its own
# (FUZZ_OPT=-O1, see ci/fuzz.sh).

# configure_build build-dir compiler sanitizers [more cmake args...]: configures a build folder
# (line tables kept, so stacks name file:line; shared libraries, so that the test executables do
# not each carry a copy of every instrumented library: 1.2 GB on disk instead of 2.7; precompiled
# headers, MTPERF_PCH, which take a quarter of the build's time off, see cmake/MtperfTargets.cmake;
# unity builds, eight sources of a library compiled as one, which take another quarter off the
# libraries' (ASan, the mtperf command: 2 min 58 s against 4 min 7 s on 2 cores), so two sources
# of one library must not define the same name in an anonymous namespace; linked by lld); a
# folder made with another compiler is started again, since CMake cannot switch one over.
configure_build() {
  local build=$1 compiler=$2 sanitizers=$3
  shift 3
  if [ -f "$build/CMakeCache.txt" ] &&
    ! grep -qE "^CMAKE_CXX_COMPILER:[A-Z]+=(.*/)?${compiler//+/\\+}\$" "$build/CMakeCache.txt"; then
    rm -rf "$build"
  fi
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTPERF_BENCH=OFF \
    -DMTPERF_SHARED_LIBS=ON -DMTPERF_PCH=ON -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
    "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld" "-DCMAKE_CXX_COMPILER=$compiler" \
    "-DMTPERF_SANITIZE=$sanitizers" "$@" >/dev/null
}

# configure_clang_asan build-dir [opt [sanitizers]]: the shared ASan + UBSan + fuzzer build
# (sanitizers: address,undefined by default; a long fuzz run may take undefined alone, for speed).
# Warnings are errors here: this is the one build of the test executables in ci/test.sh.
configure_clang_asan() {
  configure_build "$1" clang++ "${3:-address,undefined}" -DMTPERF_FUZZ=ON -DMTPERF_TESTS=ON \
    -DMTPERF_WERROR=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=${2:--O0} -gline-tables-only"
}
