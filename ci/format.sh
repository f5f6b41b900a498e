#!/usr/bin/env bash
# Fails when clang-format would change a C++ file of the project.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror 2>&1 | grep -c 'error:' || true)
if [ "$bad" != "0" ]; then
  git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror 2>&1 | grep 'error:' | cut -d: -f1 | sort -u
  echo "ci/format.sh: clang-format would change the files above (run clang-format -i)"
  exit 1
fi
