#!/usr/bin/env bash
# npm run lint: ESLint (eslint.config.js), Prettier (.prettierrc.json) over the JavaScript, and
# clang-format (.clang-format) over the C. `npm run format` (tools/lint.sh --fix) rewrites in place.
set -euo pipefail
cd "$(dirname "$0")/.."
C_FILES=(core/*.c core/*.h core/native/*.c plugins/*/*.c tests/native/*.c tests/fuzz/*.c bench/native.c)
JS_FILES='**/*.{js,mjs,cjs}'
CLANG_FORMAT="${CLANG_FORMAT:-clang-format}"
command -v "$CLANG_FORMAT" >/dev/null || { echo "lint: $CLANG_FORMAT is missing (apt-get install clang-format)" >&2; exit 1; }
if [ "${1:-}" = --fix ]; then
  npx eslint --fix .
  npx prettier --write --log-level warn "$JS_FILES"
  "$CLANG_FORMAT" -i "${C_FILES[@]}"
else
  npx eslint .
  npx prettier --check --log-level warn "$JS_FILES"
  "$CLANG_FORMAT" --dry-run -Werror "${C_FILES[@]}"
fi
