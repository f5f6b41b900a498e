#!/usr/bin/env bash
# The Debian package: dist/mtperf_VERSION_ARCH.deb, built by CPack's DEB generator from the CMake
# install rules (packaging/CMakeLists.txt; docs/packaging.md), then checked by lintian (any error
# fails). Reuses the build folder ${BUILD_DIR:-build} (configured as ci/build.sh does when it is
# not) and builds only what the package holds: the mtperf command, its man pages, bash completion
# and /etc/default/mtperf, generated from its option descriptions.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
pkgs=(lintian dpkg-dev fakeroot man-db python3)  # dpkg-dev: dpkg-shlibdeps
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci/package.sh: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  bash ci/deps.sh
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTPERF_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
else
  cmake "$build" >/dev/null  # picks up packaging/ in a folder configured before it existed
fi
if grep -q '^MTPERF_SHARED_LIBS:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "ci/package.sh: $build builds shared mtperf libraries (MTPERF_SHARED_LIBS); package a build" \
    "with static ones (BUILD_DIR=build)" >&2
  exit 1
fi
cmake --build "$build" -j"$(nproc)" --target mtperf mtperf_docs mtperf_changelog
rm -f dist/mtperf_*.deb
# The package's files are root's whatever user builds it.
(cd "$build" && fakeroot cpack -G DEB >/dev/null)
deb=$(ls dist/mtperf_*.deb)
echo "ci/package.sh: $deb ($(du -h "$deb" | cut -f1))"
# Errors fail; the warnings kept, and why, are in docs/packaging.md.
lintian --fail-on error "$deb"
echo "ci/package.sh: lintian: no errors"
