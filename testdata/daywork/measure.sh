#!/bin/sh
# Print the day-of-work measurement in markdown: the outcome of every corpus
# line at each level, the reasons ordinary work asks, and the approvals the
# scripted supervised days need. Run from anywhere inside the repository.
#
#   testdata/daywork/measure.sh            the tables
#   testdata/daywork/measure.sh lines.tsv  also every line's outcome, one a
#                                          line (level, file:line, class,
#                                          outcome, why, command), to diff
#                                          before and after a change
set -eu
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
report=$(mktemp)
trap 'rm -f "$report"' EXIT
dump=${1:-}
if [ -n "$dump" ]; then
	case $dump in /*) ;; *) dump=$PWD/$dump ;; esac
fi
cd "$root"
if ! MNEMOS_DAYWORK_REPORT=$report MNEMOS_DAYWORK_DUMP=$dump \
	go test -count=1 -run 'DayWork' ./gate/ >"$report.log" 2>&1; then
	cat "$report.log" >&2
	echo "measure.sh: the day-of-work tests failed (output above); the tables below are still the measurement" >&2
fi
rm -f "$report.log"
cat "$report"
