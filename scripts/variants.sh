#!/usr/bin/env bash
# Stage "variants": boot the same kernel again with other kernel parameters
# (selftests/variants.txt: nVHE, KPTI with forced ASID/VMID rollovers) and
# run the guest stages in each. Each boot gets its own initramfs
# (build/initramfs/l1-<name>.cpio.gz) and console (console-<name>.log in
# $RESULTS, else build/); the report parses each console as it does the
# main one and names its stages <name>/<stage>. Here, each variant is one
# TAP line for the boot and one per console line it must show.
#
#   VARIANTS="a b"   run only these (default: every line of the file);
#                    VARIANTS=none runs nothing
#   VARIANTS_FILE    default selftests/variants.txt
#   Exit: 0 all passed; else the first failure's code, as boot.sh's
#   (2 test failures or a missing console line, 124 timeout, 255 panic).
stage=variants
. "$(dirname "$0")/lib.sh"

VARIANTS_FILE=${VARIANTS_FILE:-$TOP/selftests/variants.txt}
[ -r "$VARIANTS_FILE" ] || die $E_USAGE "VARIANTS_FILE '$VARIANTS_FILE' not readable"

trim() { sed 's/^[[:space:]]*//; s/[[:space:]]*$//' <<<"$1"; }

declare -A append expect tests envs
names=()
while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	IFS='|' read -r n a e t v <<<"$line"
	n=$(trim "$n")
	[[ $n =~ ^[a-z0-9-]+$ ]] || die $E_USAGE "$VARIANTS_FILE: bad variant name '$n'"
	names+=("$n")
	append[$n]=$(trim "$a")
	expect[$n]=$(trim "$e")
	tests[$n]=$(trim "$t")
	envs[$n]=$(trim "$v")
done <"$VARIANTS_FILE"

want=${VARIANTS:-${names[*]}}
[ "$want" = none ] && { info "VARIANTS=none: nothing to boot"; exit 0; }
for n in $want; do
	[ -n "${append[$n]+x}" ] || die $E_USAGE "unknown variant '$n' (have: ${names[*]})"
done

outdir=${RESULTS:-$TOP/build}
ktap=()
i=0
first_rc=0
for n in $want; do
	info "variant $n: kernel parameters '${append[$n]}'"
	initrd=$TOP/build/initramfs/l1-$n.cpio.gz
	console=$outdir/console-$n.log
	# Overrides: KSELFTEST_<NAME>_ARGS for initramfs.sh, QEMU_SMP/QEMU_MEM/
	# QEMU_MACHINE and QEMU_EXTRA (one -device) for boot.sh.
	ovr=()
	qovr=()
	IFS=';' read -r -a kv <<<"${envs[$n]}"
	for x in "${kv[@]}"; do
		x=$(trim "$x")
		[ -n "$x" ] || continue
		if [[ $x =~ ^KSELFTEST_[A-Z0-9_]+_ARGS= ]]; then
			ovr+=("$x")
		elif [[ $x =~ ^QEMU_(SMP|MEM)=[0-9]+[GM]?$ || $x =~ ^QEMU_MACHINE=[a-z0-9,=-]+$ ||
			$x =~ ^QEMU_EXTRA=-device\ [a-z0-9,=-]+$ ]]; then
			qovr+=("$x")
		else
			die $E_USAGE "variant $n: bad override '$x'"
		fi
	done
	# The main boot's extra guest stages (make check's kvm-unit-tests) are
	# not run again in each variant.
	# A TESTS given to make (the edit loop) replaces the variant's own.
	env -u STAGES_EXTRA "${ovr[@]}" LANE="$n" TESTS="${TESTS:-${tests[$n]:-}}" OUT="$initrd" "$TOP/scripts/initramfs.sh" ||
		die $E_FAIL "variant $n: initramfs failed"
	if [ -n "${RESULTS:-}" ]; then
		echo "$n" >>"$RESULTS/variants.list"
	fi
	set +e
	env "${qovr[@]}" INITRD="$initrd" CONSOLE_LOG="$console" \
		APPEND_EXTRA="${append[$n]} ${APPEND_EXTRA:-}" "$TOP/scripts/boot.sh"
	rc=$?
	set -e
	i=$((i + 1))
	if [ "$rc" = 0 ]; then
		ktap+=("ok $i $n: boot and guest stages")
	else
		ktap+=("not ok $i $n: boot and guest stages # boot.sh rc=$rc, console $console")
		[ "$first_rc" != 0 ] || first_rc=$rc
	fi
	IFS=';' read -r -a res <<<"${expect[$n]}"
	for re in "${res[@]}"; do
		re=$(trim "$re")
		[ -n "$re" ] || continue
		i=$((i + 1))
		if grep -a -q -E -- "$re" "$console"; then
			ktap+=("ok $i $n: console shows /$re/")
		else
			ktap+=("not ok $i $n: console shows /$re/ # not found: the parameters did not take effect")
			warn "variant $n: no console line matches /$re/"
			[ "$first_rc" != 0 ] || first_rc=$E_FAIL
		fi
	done
done

printf '%s\n' "${ktap[@]}"
if [ -n "${RESULTS:-}" ]; then
	mkdir -p "$RESULTS/ktap"
	{
		echo "KTAP version 1"
		echo "1..$i"
		printf '%s\n' "${ktap[@]}"
	} >"$RESULTS/ktap/variants.ktap"
fi
[ "$first_rc" = 0 ] || die "$first_rc" "variant boots failed (first rc=$first_rc); see the console-<name>.log files"
info "PASS: $(wc -w <<<"$want") variant boot(s) in $(elapsed)"
