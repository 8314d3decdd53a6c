#!/bin/sh
# Stage "kvm-unit-tests": kvm-unit-tests' arm64 groups (KUT_GROUPS, default
# "its": its-introspection, its-trigger, its-migration,
# its-pending-migration, its-migrate-unmapped-collection) with the L2
# qemu-system-aarch64 as the VMM and ACCEL=kvm, so that a real VMM drives
# this kernel's vgic-its, ITS save/restore through QEMU migration included.
#
# One run_tests.sh per test, each with its own log directory, timeout and
# duration. A test's log (the QEMU command, the test's output) reaches the
# console while it runs (every STREAM_SECONDS), "# "-prefixed and framed
# by "# kvm-unit-tests: <name>", so that the host can split per-test logs
# (scripts/report.py: logs/kut:<name>.log). TAP, one line per test:
#   PASS  ok N kvm-unit-tests: <name>
#   SKIP  ok N kvm-unit-tests: <name> # SKIP <the harness's reason>[: the test's first SKIP line]
#   FAIL  not ok N kvm-unit-tests: <name> # <the harness's reason>[; first: the first FAIL line]
#   no result line (the stage's guard ended it): not ok ... # TIMEOUT <s> seconds
#
# From /etc/workbench/env (scripts/initramfs.sh): KUT_GROUPS; KUT_TIMEOUT
# (seconds per test: the harness's TIMEOUT for each of its QEMUs, and the
# stage's guard 60 s later for the whole test, both QEMUs of a migration
# test included); KUT_MAX_SMP (the harness's MAX_SMP: the ITS tests want 4
# vCPUs, KVM gives a VM more vCPUs than L1 has CPUs); STREAM_SECONDS.
# With /opt/kvm-unit-tests/SKIP (the host had no source): one SKIP line
# with its reason. WB_ETC, WB_KUT, WB_KUT_TOOLS, WB_TMP, KUT_QEMU:
# /etc/workbench, /opt/kvm-unit-tests, /opt/kut-tools/bin (bash, GNU
# tools, ncat: the harness's needs, first in PATH here only), /tmp and
# /usr/bin/qemu-system-aarch64 unless set, as only the workbench's own
# tests do (scripts/workbench-faults.sh runs this script on the host).
etc=${WB_ETC:-/etc/workbench}
kut=${WB_KUT:-/opt/kvm-unit-tests}
tools=${WB_KUT_TOOLS:-/opt/kut-tools/bin}
tmp=${WB_TMP:-/tmp}
[ ! -r $etc/env ] || . $etc/env
groups=${KUT_GROUPS:-its}
tmo=${KUT_TIMEOUT:-300}
smp=${KUT_MAX_SMP:-4}
every=${STREAM_SECONDS:-10}
qemu=${KUT_QEMU:-/usr/bin/qemu-system-aarch64}
guard=$((tmo + 60))
echo "TAP version 13"
if [ -r $kut/SKIP ]; then
	echo "1..1"
	echo "ok 1 kvm-unit-tests # SKIP $(head -n 1 $kut/SKIP)"
	exit 0
fi
export PATH=$tools:$PATH
# bash's process substitution needs /dev/fd and the harness tees to
# /dev/stderr; devtmpfs has neither (without them every test "SKIP"s).
for l in fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 stderr:/proc/self/fd/2; do
	[ -e /dev/${l%%:*} ] || ln -s ${l#*:} /dev/${l%%:*} 2>/dev/null
done
# What the harness would otherwise turn into a SKIP of every test (it
# skips a test whose QEMU cannot start): a broken setup, not a test result.
errata=$(sed -n 's/^ERRATATXT=//p' $kut/config.mak 2>/dev/null)
setup=
[ -f $kut/config.mak ] || setup="no $kut/config.mak"
[ -n "$setup" ] || [ -z "$errata" ] || [ -f "$errata" ] || setup="config.mak's ERRATATXT $errata does not exist"
[ -n "$setup" ] || [ -x "$qemu" ] || setup="no VMM $qemu"
[ -n "$setup" ] || [ -c /dev/kvm ] || setup="no /dev/kvm"
[ -n "$setup" ] || [ -e /dev/fd/1 ] || setup="no /dev/fd (bash's process substitution needs it)"
[ -n "$setup" ] || command -v bash >/dev/null || setup="no bash in $tools or PATH"
if [ -n "$setup" ]; then
	echo "1..1"
	echo "not ok 1 kvm-unit-tests: setup # $setup"
	exit 1
fi

# The tests of each group (unittests.cfg order), each once; "!<group>
# <why>" for a group that lists no test.
: >$tmp/kut.list
for g in $groups; do
	(cd $kut && bash ./run_tests.sh -l -g "$g") </dev/null >$tmp/kut.names 2>&1
	if [ ! -s $tmp/kut.names ] || grep -q '[^A-Za-z0-9_-]' $tmp/kut.names; then
		echo "!$g run_tests.sh -l -g $g listed no tests: $(head -n 1 $tmp/kut.names)" >>$tmp/kut.list
		continue
	fi
	while read -r t; do
		grep -q "^$t " $tmp/kut.list || echo "$t $g" >>$tmp/kut.list
	done <$tmp/kut.names
done
echo "1..$(wc -l <$tmp/kut.list)"

# show_log [all]: copy the lines of the test's log not on the console yet
# to it, "# "-prefixed: the complete ones, or all once the test has ended.
show_log() {
	[ -f "$log" ] || return 0
	if [ "${1:-}" = all ]; then
		sed -n "$((shown + 1)),\$s/^/# /p" "$log"
		# a last line without its newline must not swallow the next one
		[ -z "$(tail -c 1 "$log")" ] || echo
		return
	fi
	lines=$(wc -l <"$log")
	[ "$lines" -gt "$shown" ] || return 0
	sed -n "$((shown + 1)),${lines}s/^/# /p" "$log"
	shown=$lines
}

esc=$(printf '\033')
failed=
i=0
while read -r t g <&3; do
	i=$((i + 1))
	case $t in
	'!'*)
		echo "not ok $i kvm-unit-tests: group ${t#!} # $g"
		failed=1
		continue
		;;
	esac
	echo "# kvm-unit-tests: $t"
	echo "# command: cd $kut && MAX_SMP=$smp QEMU=$qemu ACCEL=kvm TIMEOUT=${tmo}s ./run_tests.sh -v -g $g $t (timeout ${guard}s)"
	logd=$tmp/kut-logs/$t
	log=$logd/$t.log
	rm -rf "$logd" "$logd.old" $tmp/kut.rc
	mkdir -p $tmp/kut-logs
	shown=0
	start=$(cut -d. -f1 /proc/uptime)
	# GNU timeout, not in the foreground: at the guard it signals the
	# whole process group, the QEMUs and the migration helpers included.
	(
		cd $kut && MAX_SMP=$smp QEMU=$qemu ACCEL=kvm TIMEOUT=${tmo}s unittest_log_dir=$logd \
			timeout -k 10 $guard bash ./run_tests.sh -v -g "$g" "$t" </dev/null >$tmp/kut.out 2>&1
		echo $? >$tmp/kut.rc
	) &
	pid=$!
	waited=0
	until [ -s $tmp/kut.rc ]; do
		sleep 1
		waited=$((waited + 1))
		[ "$every" = 0 ] || [ $((waited % every)) != 0 ] || show_log
	done
	wait $pid
	end=$(cut -d. -f1 /proc/uptime)
	show_log all
	# The harness's own lines: the test's command line (-v) and its result
	# ("PASS <name> (N tests)", "SKIP <name> (<reason>)", ...), uncoloured.
	sed "s/$esc\[[0-9;]*m//g" $tmp/kut.out >$tmp/kut.res
	sed 's/^/# /' $tmp/kut.res
	rc=$(cat $tmp/kut.rc)
	res=$(grep -E "^(PASS|FAIL|SKIP) $t( |\$)" $tmp/kut.res | tail -n 1)
	detail=${res#* $t}
	detail=${detail# }
	detail=${detail#(}
	detail=${detail%)}
	echo "# duration: $t $((end - start))s"
	case ${res%% *} in
	PASS) echo "ok $i kvm-unit-tests: $t" ;;
	SKIP)
		# the test's first "SKIP: " line, else its last line before its
		# summary (pmu.flat: "No PMU found, test skipped...")
		why=$(grep -m 1 '^SKIP: ' "$log" 2>/dev/null | sed 's/^SKIP: //' | tr -d '\r')
		[ -n "$why" ] || why=$(sed -n '/^SUMMARY: /{x;p;q}; /[^[:space:]]/h' "$log" 2>/dev/null | tr -d '\r')
		echo "ok $i kvm-unit-tests: $t # SKIP $detail${why:+: $why}"
		;;
	FAIL)
		why=$(grep -m 1 '^FAIL: ' "$log" 2>/dev/null | tr -d '\r')
		echo "not ok $i kvm-unit-tests: $t # $detail${why:+; first: $why}"
		failed=1
		;;
	*)
		case $rc in
		124 | 137) echo "not ok $i kvm-unit-tests: $t # TIMEOUT $guard seconds" ;;
		*) echo "not ok $i kvm-unit-tests: $t # no result line from run_tests.sh (exit=$rc)" ;;
		esac
		failed=1
		;;
	esac
done 3<$tmp/kut.list
[ -z "$failed" ]
