#!/usr/bin/env bash
# "make kernel-mutants": prove that the in-guest tests catch allocator bugs
# in a real kernel. For each seeded bug in selftests/mutants/*.patch: apply
# it to a worktree of build/linux at HEAD, build (O=build/kernel-mutant,
# ccache makes it incremental), boot the "kpti-rollover" variant's kernel
# parameters and machine (or those of the lane its README line names)
# with only the expected tests (KVM selftests, kvm-unit-tests,
# KUnit suites), and require each to fail.
# A mutant that the test misses ("survived") fails the target. Not part of
# make check (one kernel build per mutant).
#
#   MUTANTS="a b"  only these (names of selftests/mutants/*.patch)
#   KSFT_OUT       the built selftests (default build/selftests)
#   Results: $RESULTS/kernel-mutants.tsv (or build/), consoles console-mutant-<name>.log
stage=kernel-mutants
. "$(dirname "$0")/lib.sh"
need_cmd git

TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
MDIR=$TOP/selftests/mutants
# MUTANT_TREE, MUTANT_O: the worktree and the build output (ccache hits
# the main build only when MUTANT_O/.. holds MUTANT_TREE as "linux").
WT=${MUTANT_TREE:-$TOP/build/mutant-tree}
MO=${MUTANT_O:-$TOP/build/kernel-mutant}
OUTDIR=${RESULTS:-$TOP/build}
[ -e "$TREE/.git" ] || die $E_USAGE "no tree at $TREE: run 'make apply' first"
KSFT_OUT=$(realpath -m "${KSFT_OUT:-$TOP/build/selftests}")
export KSFT_OUT
[ -d "$KSFT_OUT/kvm" ] || die $E_USAGE "no selftests in $KSFT_OUT: run 'make selftests' first"

want=${MUTANTS:-$(cd "$MDIR" && ls *.patch | sed 's/\.patch$//')}
# lane_field <lane> <n>: field n of the lane's line of selftests/variants.txt
lane_field() {
	grep -E "^$1 *\|" "$TOP/selftests/variants.txt" | cut -d'|' -f"$2" | xargs
}

rm -rf "$WT"
git -C "$TREE" worktree prune
git -C "$TREE" worktree add -q --detach "$WT" HEAD
trap 'git -C "$TREE" worktree remove --force "$WT" >/dev/null 2>&1 || true' EXIT

tsv=$OUTDIR/kernel-mutants.tsv
: >"$tsv"
survived=0
for m in $want; do
	p=$MDIR/$m.patch
	[ -f "$p" ] || die $E_USAGE "no mutant $p"
	line=$(grep -E "^$m\.patch +expect:" "$MDIR/README" || true)
	[ -n "$line" ] || die $E_USAGE "no 'expect:' line for $m in $MDIR/README"
	# "expect: <tests> [boot: <lane>]": the lane of variants.txt whose
	# kernel parameters and machine the mutant boots (kpti-rollover).
	expect=$(sed 's/.*expect: *//; s/ *boot:.*//' <<<"$line")
	lane=kpti-rollover
	[[ $line != *" boot: "* ]] || lane=$(sed 's/.* boot: *//' <<<"$line" | xargs)
	append=$(lane_field "$lane" 2)
	[ -n "$append" ] || die $E_USAGE "mutant $m: no line for lane '$lane' in selftests/variants.txt"
	ovr=$(lane_field "$lane" 5)
	git -C "$WT" checkout -q -f HEAD
	git -C "$WT" apply "$p" || die $E_USAGE "mutant $m no longer applies to the series: update $p"
	info "mutant $m: building"
	if ! AUDIT_MISSING=fail TREE=$WT O=$MO "$TOP/scripts/build.sh" >"$OUTDIR/build-mutant-$m.log" 2>&1; then
		tail -n 20 "$OUTDIR/build-mutant-$m.log" >&2
		die $E_FAIL "mutant $m does not build (log: $OUTDIR/build-mutant-$m.log)"
	fi
	initrd=$TOP/build/initramfs/l1-mutant.cpio.gz
	IFS=';' read -r -a kv <<<"$ovr"
	# KSELFTEST_*_ARGS for initramfs.sh, QEMU_* for boot.sh
	ovrs=()
	qovrs=()
	for x in "${kv[@]}"; do
		x=$(xargs <<<"$x")
		case $x in
		'') ;;
		QEMU_*) qovrs+=("$x") ;;
		*) ovrs+=("$x") ;;
		esac
	done
	# kvm:<test> entries run in the guest's selftest stage; kut:<test>
	# entries in its kvm-unit-tests stage (KUT_GROUPS, default its: the
	# whole group runs); kunit:<suite> entries are KUnit suites, which the
	# kernel runs at boot anyway.
	kvm_tests=$(printf '%s\n' $expect | grep '^kvm:' | xargs || true)
	kut_tests=$(printf '%s\n' $expect | grep '^kut:' | xargs || true)
	stages=
	set --
	if [ -n "$kvm_tests" ]; then
		set -- TESTS="$kvm_tests"
		stages=kselftest-kvm
	fi
	[ -z "$kut_tests" ] || stages="${stages:+$stages }kvm-unit-tests"
	set -- "$@" STAGES="${stages:-kvm-check}"
	env "${ovrs[@]}" "$@" LANE="$lane" IMAGE=$MO/arch/arm64/boot/Image \
		OUT="$initrd" "$TOP/scripts/initramfs.sh" >/dev/null || die $E_FAIL "initramfs for mutant $m failed"
	console=$OUTDIR/console-mutant-$m.log
	set +e
	env "${qovrs[@]}" IMAGE=$MO/arch/arm64/boot/Image INITRD=$initrd CONSOLE_LOG=$console \
		APPEND_EXTRA="$append" TIMEOUT=${TIMEOUT:-900} "$TOP/scripts/boot.sh" >/dev/null 2>&1
	rc=$?
	set -e
	# A test that could not run is no catch: a missing binary (exit 127)
	# means selftests older than the plan.
	for t in $expect; do
		case $t in kvm:*) ;; *) continue ;; esac
		! grep -a -q -E "^not ok [0-9]+ selftests: kvm: ${t#kvm:} # exit=127$" "$console" ||
			die $E_USAGE "mutant $m: ${t#kvm:} did not run (no binary in $KSFT_OUT/kvm): run 'make selftests'"
	done
	# Each expected test must fail (or the guest must crash or hang).
	missed=
	for t in $expect; do
		case $t in
		kvm:*) re="^not ok [0-9]+ selftests: kvm: ${t#kvm:}( |$)" ;;
		kunit:*) re="^(\[ *[0-9.]+\] )?not ok [0-9]+ ${t#kunit:}$" ;;
		kut:*) re="^not ok [0-9]+ kvm-unit-tests: ${t#kut:}( |$)" ;;
		*) die $E_USAGE "mutant $m: expect entry '$t' is none of kvm:<test>, kut:<test>, kunit:<suite>" ;;
		esac
		grep -a -q -E "$re" "$console" || missed="$missed $t"
	done
	why=$(grep -a -m1 -A1 'Test Assertion Failure' "$console" | tail -n1 | sed 's/^# *//' || true)
	[ -n "$why" ] || [ -z "$kut_tests" ] ||
		why=$(grep -a -m1 -E '^not ok [0-9]+ kvm-unit-tests: ' "$console" | cut -c1-240 || true)
	if [ -z "$missed" ]; then
		info "mutant $m: caught by $expect (boot rc=$rc): $why"
		printf '%s\tcaught\t%s\t%s\n' "$m" "$expect" "$why" >>"$tsv"
	elif [ "$rc" = 255 ] || [ "$rc" = 124 ]; then
		info "mutant $m: caught: the guest crashed or hung (boot rc=$rc)"
		printf '%s\tcaught\t%s\tboot rc=%s\n' "$m" "$expect" "$rc" >>"$tsv"
	else
		warn "mutant $m: SURVIVED:$missed did not fail (boot rc=$rc, console $console)"
		printf '%s\tsurvived\t%s\tnot failed:%s\n' "$m" "$expect" "$missed" >>"$tsv"
		survived=$((survived + 1))
	fi
done
[ "$survived" = 0 ] || die $E_FAIL "$survived mutant(s) survived (see $tsv)"
info "PASS: every mutant caught, in $(elapsed) (see $tsv)"
