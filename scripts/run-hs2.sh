#!/bin/sh
# The documents' load on a big machine, from the HS2 kit (scripts/hs2-kit.sh puts this file
# at the kit's root): the load test at HS2's rate from 4 generator shards, then the bench,
# both with the local provider running the kit's own programs (bin/: no Go, no Docker, no
# redis-server needed). Needs only /bin/sh.
#
#   ./run-hs2.sh [OUT]     default OUT: ./hs2-run beside the kit
#
# Writes OUT/summary.json, OUT/report.html (and junit.xml, a directory per scenario) from the
# load test and OUT/bench.json, OUT/bench.html from the bench. Env (defaults are the
# documents' load): RATE (40000), TIME_SCALE (0.2), SHARDS (4), BENCH (1; 0 skips the bench),
# LOADTEST_FLAGS and BENCH_FLAGS (more flags, word-split). Exit code: the load test's (0
# pass, 1 a gate failed, 2 could not run, 3 generator-bound), else the bench's.
set -u
kit=$(cd "$(dirname "$0")" && pwd -P)
out=${1:-$kit/../hs2-run}
RATE=${RATE:-40000}
TIME_SCALE=${TIME_SCALE:-0.2}
SHARDS=${SHARDS:-4}
BENCH=${BENCH:-1}
mkdir -p "$out" || exit 2

echo "== rlharness $("$kit/bin/harness" --version 2>&1 | awk '{print $NF}'), $(nproc 2>/dev/null || echo '?') cores, out $out"
# shellcheck disable=SC2086 # LOADTEST_FLAGS is word-split on purpose
"$kit/bin/harness" loadtest --provider local --bin-dir "$kit/bin" \
	--time-scale "$TIME_SCALE" --rate "$RATE" --matrix=false --shards "$SHARDS" \
	--out "$out" ${LOADTEST_FLAGS:-}
rc=$?
echo "== load test exit code $rc"

brc=0
if [ "$BENCH" != 0 ]; then
	# shellcheck disable=SC2086
	"$kit/bin/harness" bench --provider local --bin-dir "$kit/bin" --out "$out" --html bench.html ${BENCH_FLAGS:-}
	brc=$?
	echo "== bench exit code $brc"
fi
for f in summary.json report.html bench.json; do
	[ -f "$out/$f" ] || { [ "$f" = bench.json ] && [ "$BENCH" = 0 ]; } || echo "missing: $out/$f"
done
if [ "$rc" -ne 0 ]; then
	exit "$rc"
fi
exit "$brc"
