#!/bin/sh
# The whole suite (npm test): every file in two workers, the slowest first (test/timings.json), then one line that
# names what did not run here and why (engines that cannot start without root or apt, tmux, a harness CLI the npm
# registry could not give) — tests note it through engines.ts cannotRun. In CI (CI set) nothing is skipped: such a
# test fails instead.
skips=$(mktemp "${TMPDIR:-/tmp}/subagents-test-skips.XXXXXX")
SUBAGENTS_TEST_SKIPS=$skips bun test --timeout 60000 --parallel=2 --timings=test/timings.json "$@"
status=$?
if [ -s "$skips" ]; then
  echo "did not run here ($(sort -u "$skips" | wc -l | tr -d ' ')): $(sort -u "$skips" | paste -sd ';' - | sed 's/;/; /g')"
fi
rm -f "$skips"
exit "$status"
