#!/bin/bash
# make fuzz: runs every fuzzer of fuzz/ for a time budget, in the sanitized
# build (ASan + UBSan + libFuzzer coverage), and prints a table of what
# happened. Usage: scripts/fuzz.sh BUILD SECONDS_PER_FUZZER
#
# Each fuzzer starts from the seeds (fuzz/corpus.py seeds: the tests and
# examples), the regression corpus (fuzz/corpus) and its own growing corpus
# under BUILD/fuzz/corpus, which later runs continue from. A finding (crash,
# sanitizer report, leak, timeout, out of memory) stops that fuzzer, leaves
# the input under BUILD/fuzz/findings/<fuzzer>/ and makes this script fail:
# add it to fuzz/corpus/<fuzzer>/ (corpus.py encode) with the fix.
#
# FUZZ_SEED_LIMIT=N replays at most N seeds per fuzzer (an even spread): a
# smoke run's budget then goes to fuzzing, not to replaying every test under
# the sanitizers (make test-sanitize runs the tests themselves).
set -u
BUILD=${1:?usage: fuzz.sh BUILD SECONDS}
SECONDS_PER=${2:?usage: fuzz.sh BUILD SECONDS}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
WORK=$BUILD/fuzz
FUZZERS=${FUZZERS:-"fp4-opt-fuzzer fp4-option-fuzzer fp4-sharding-fuzzer fp4-quant-fuzzer fp4-case-file-fuzzer fp4-task-fuzzer fp4-capi-fuzzer"}

rm -rf "$WORK/seeds" "$WORK/regressions"
$PY "$SRC/fuzz/corpus.py" seeds "$SRC" "$WORK/seeds" || exit 1
$PY "$SRC/fuzz/corpus.py" decode "$SRC/fuzz/corpus" "$WORK/regressions" || exit 1
if [ -n "${FUZZ_SEED_LIMIT:-}" ]; then
  $PY "$SRC/fuzz/corpus.py" thin "$WORK/seeds" "$FUZZ_SEED_LIMIT" || exit 1
fi

status=0
summary="| fuzzer | seconds | executions | exec/s | corpus | coverage | findings | slow inputs |
|---|---|---|---|---|---|---|---|"
for fuzzer in $FUZZERS; do
  mkdir -p "$WORK/corpus/$fuzzer" "$WORK/findings/$fuzzer" "$WORK/seeds/$fuzzer" \
    "$WORK/regressions/$fuzzer"
  log=$WORK/$fuzzer.log
  echo "== $fuzzer: ${SECONDS_PER}s (log: $log)"
  # -close_fd_mask=3: the tools' own messages would drown the log.
  "$BUILD/bin/$fuzzer" "$WORK/corpus/$fuzzer" "$WORK/seeds/$fuzzer" \
    "$WORK/regressions/$fuzzer" \
    -max_total_time="$SECONDS_PER" -timeout=60 -rss_limit_mb=6144 \
    -max_len=65536 -close_fd_mask=3 -print_final_stats=1 -report_slow_units=30 \
    -artifact_prefix="$WORK/findings/$fuzzer/" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  size=$(ls "$WORK/corpus/$fuzzer" | wc -l)
  # Slow inputs (over -report_slow_units seconds) are reported, not failed:
  # a whole pipeline down to ISA under ASan can take that long.
  slow=$(ls "$WORK/findings/$fuzzer" | grep -c '^slow-unit-' || true)
  findings=$(ls "$WORK/findings/$fuzzer" | grep -vc '^slow-unit-' || true)
  if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
    status=1
    echo "$fuzzer: FINDING (exit $rc); inputs in $WORK/findings/$fuzzer"
    grep -E "ERROR|fuzzer finding|LLVM ERROR|Assertion|SUMMARY|timeout|out-of-memory" "$log" | head -5
  fi
  summary="$summary
| $fuzzer | $SECONDS_PER | ${execs:-?} | ${rate:-?} | $size | ${cov:-?} | $findings | $slow |"
done
echo
echo "$summary" | tee "$WORK/summary.md"
exit $status
