# Sourced by the static kernel reports (benchmarks/*_report.sh): checks the
# BUILD_DIR argument and fp4-opt, and sets $root, $fp4opt and $out (a
# temporary directory removed on exit).
report=$(basename "$0")
build=${1:?usage: benchmarks/$report BUILD_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fp4opt="$build/bin/fp4-opt"
if [[ ! -x "$fp4opt" ]]; then
  echo "$report: $fp4opt not found; build the fp4-opt target" >&2
  exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
