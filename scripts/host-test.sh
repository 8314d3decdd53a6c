#!/usr/bin/env bash
# Run a host-side test script whose output ends with "N passed, N failed"
# and whose "ok"/"not ok" lines are TAP-like; keep its output as
# $RESULTS/ktap/<name>.ktap so the report nests it verbatim.
# usage: host-test.sh NAME SCRIPT [ARGS...]
#
# VERDICT_KEY (set by the caller, for deterministic checks only): a string
# naming every input of the check (e.g. sha256 of its files and the tools'
# versions). A passing run's output is then kept in
# $CACHE_DIR/verdicts/NAME-<sha256 of VERDICT_KEY>.out, and a later run with
# the same key prints that output again instead of re-running the check.
# VERDICT_CACHE=0 always runs the check.
stage=${1:-host-test}
. "$(dirname "$0")/lib.sh"
[ $# -ge 2 ] || die $E_USAGE "usage: host-test.sh NAME SCRIPT [ARGS...]"
name=$1
script=$2
shift 2
[ -x "$script" ] || die $E_USAGE "$script missing or not executable"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
VERDICT_CACHE=${VERDICT_CACHE:-1}
case $VERDICT_CACHE in 0 | 1) ;; *) die $E_USAGE "VERDICT_CACHE='$VERDICT_CACHE' must be 0 or 1" ;; esac
cached=
if [ -n "${VERDICT_KEY:-}" ]; then
	key=$(printf '%s' "$VERDICT_KEY" | sha256sum | cut -c1-16)
	cached=$CACHE_DIR/verdicts/$name-$key.out
fi
if [ -n "$cached" ] && [ "$VERDICT_CACHE" = 1 ] && [ -s "$cached" ]; then
	info "inputs unchanged since a passing run (key $key): its output follows; VERDICT_CACHE=0 re-runs"
	echo "# cached verdict, key $key, from $(date -u -r "$cached" +%FT%TZ)" | tee "$out"
	tee -a "$out" <"$cached"
	rc=0
else
	set +e
	"$script" "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	set -e
	if [ -n "$cached" ] && [ "$rc" = 0 ]; then
		mkdir -p "${cached%/*}"
		cp "$out" "$cached.tmp" && mv "$cached.tmp" "$cached"
	fi
fi
if [ -n "${RESULTS:-}" ]; then
	mkdir -p "$RESULTS/ktap"
	# Accept TAP ("ok N name") and the "PASS  name: detail" /
	# "FAIL  name: detail" lines of the selftests/*/check.sh scripts.
	awk 'BEGIN { print "KTAP version 1" }
	/^(not )?ok [0-9]+ / { print; next }
	/^PASS  / { sub(/^PASS  /, ""); n++; split($0, a, ": "); d = substr($0, length(a[1]) + 3)
		print "ok " n " " a[1] (d == "" ? "" : " # " d); next }
	/^FAIL  / { sub(/^FAIL  /, ""); n++; split($0, a, ": "); d = substr($0, length(a[1]) + 3)
		print "not ok " n " " a[1] (d == "" ? "" : " # " d); next }
	/^# / { print }' "$out" >"$RESULTS/ktap/$name.ktap"
fi
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n1 || true)
[ -n "$last" ] || die $E_FAIL "$script printed no 'N passed, N failed' line (rc=$rc)"
[ "$rc" = 0 ] || die $E_FAIL "$script failed (rc=$rc): $last"
info "PASS: $last in $(elapsed)"
