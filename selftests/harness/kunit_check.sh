#!/bin/bash
# The allocator's KUnit suite on the host, and its mutation gate.
#
# arch/arm64/lib/asid_kunit.c is built UNMODIFIED together with the real
# arch/arm64/lib/asid.c, arch/arm64/mm/context.c, arch/arm64/kvm/vmid.c,
# asm/asid.h and asm/asid_trace.h (copies of KSRC's working tree) against
# shim/ and the runner kunit_host.c (KTAP, a case per child process, models
# of the TLB maintenance operations behind local_flush_tlb_all() and
# __kvm_flush_vm_context()), with the host-only case of kunit_host_init.c
# (allocation failures of the initialisation). Then:
#   1. clean runs: every case passes, none is skipped, with 4 and 3
#      possible CPUs, and with 4 built with ASan+UBSan; with 2 and 1, and without KVM, the cases that cannot
#      run are skipped (kunit_skip()), each saying why ("needs N possible
#      CPUs: run with -smp N", "needs KVM initialised at EL2"), and none
#      fails;
#   2. every mutant of kunit-mutants.txt (one-line sed edits of a COPY)
#      must be killed by one of the cases named for it, and the equivalent
#      ones (cases "-") must survive. Mutants are built and run JOBS at a
#      time; only the objects of the mutated file are rebuilt.
# KSRC: the kernel tree (default $TOP/build/linux). MUTANTS: the list.
# ONLY=<glob>: run only the mutants whose id matches (no clean runs).
# KUNIT_HOST_OUT=<file>: build the suite, copy its runner there, run nothing.
# Output: "PASS  name: ..." / "FAIL  name: ..." lines, a table
# (mutant, killed by, time) and "N passed, N failed".
# Exit: 0 all good, 1 setup/build/clean failure or a mutant whose sed
# changes nothing or more than one line, 2 a mutant survived (or was killed
# only by cases not named for it, or an equivalent one was killed).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KSRC=${KSRC:-$TOP/build/linux}
MUTANTS=${MUTANTS:-$HERE/kunit-mutants.txt}
JOBS=${JOBS:-2}
ONLY=${ONLY:-}
CC=${CC:-gcc}
DEFS="-DCONFIG_KUNIT -DCONFIG_KVM -DCONFIG_ARM64_DEBUG_ASID_ALIAS
      -DCONFIG_ARM64_DEBUG_ASID_BITS -DASID_TEST_TLB_MODEL -DNR_CPUS=8"
# -O0: the gate rebuilds a header mutant's four objects in about 2 s
CFLAGS="-O0 -g0 -Wall -Wno-unused-function -Wno-format-zero-length $DEFS"
FILES="arch/arm64/lib/asid_kunit.c arch/arm64/lib/asid.c arch/arm64/mm/context.c
       arch/arm64/kvm/vmid.c arch/arm64/include/asm/asid.h
       arch/arm64/include/asm/asid_trace.h"
T0=$(date +%s.%N)
pass=0; fail=0; survived=0

die() { echo "ERROR: $*"; exit 1; }
ok() { echo "PASS  $1: $2"; pass=$((pass + 1)); }
ko() { echo "FAIL  $1: $2"; fail=$((fail + 1)); }
[ -d "$KSRC/arch/arm64" ] || die "KSRC=$KSRC is not a kernel tree"
[ -f "$MUTANTS" ] || die "no mutant list $MUTANTS"
W=$(mktemp -d /tmp/kunit-gate.XXXXXX)
trap 'rm -rf "$W"' EXIT

# ---- sources: $W/base/{*.c,asm/*.h}, as the files' own directories ----
mkdir -p "$W/base/asm"
for f in $FILES; do
	[ -f "$KSRC/$f" ] || die "$KSRC/$f missing (series not applied?)"
	case $f in
	*/asm/*) cp "$KSRC/$f" "$W/base/asm/" ;;
	*) cp "$KSRC/$f" "$W/base/" ;;
	esac
done
# the host-only case of the initialisation's allocation failures
cp "$HERE/kunit_host_init.c" "$W/base/" || die "no $HERE/kunit_host_init.c"
grep -q 'kvm_arm_vmid_init_info' "$W/base/vmid.c" ||
	die "$KSRC/arch/arm64/kvm/vmid.c has no kvm_arm_vmid_init_info(): not the series' allocator"

# objs DIR: build DIR's objects that are missing or older than a source
objs() {
	local d=$1 s o
	for s in asid_kunit kunit_host_init asid context vmid; do
		o=$d/$s.o
		[ -f "$o" ] && [ "$o" -nt "$d/$s.c" ] && [ "$o" -nt "$d/asm/asid.h" ] && continue
		# shellcheck disable=SC2086
		(cd "$d" && $CC $CFLAGS ${WERROR:-} -I. -I"$HERE/shim" -c "$s.c" -o "$s.o") \
			>>"$d/cc.log" 2>&1 || return 1
	done
	$CC -o "$d/kunit_host" "$W/kunit_host.o" "$d"/asid_kunit.o "$d"/kunit_host_init.o "$d"/asid.o \
		"$d"/context.o "$d"/vmid.o >>"$d/cc.log" 2>&1
}
# shellcheck disable=SC2086
$CC $CFLAGS -Werror -I"$HERE/shim" -c "$HERE/kunit_host.c" -o "$W/kunit_host.o" \
	>"$W/cc.log" 2>&1 || { cat "$W/cc.log"; die "build of kunit_host.c failed"; }
WERROR=-Werror objs "$W/base" || { cat "$W/base/cc.log"; die "build of the suite failed (warnings are errors)"; }
BIN=$W/base/kunit_host
if [ -n "${KUNIT_HOST_OUT:-}" ]; then
	cp "$BIN" "$KUNIT_HOST_OUT" || die "cannot write KUNIT_HOST_OUT=$KUNIT_HOST_OUT"
	exit 0
fi

# failing CASES of a KTAP output file
failing() { sed -n 's/^    not ok [0-9]* \([a-z0-9_]*\).*/\1/p' "$1" | tr '\n' ' '; }

# ---- 1. clean runs ----
clean() {	# clean NAME NCPU [env...]: everything passes
	local n=$1 c=$2 o="$W/clean-${1//\//-}.out"; shift 2
	env KUNIT_NCPU="$c" "$@" "$BIN" >"$o" 2>"$o.err"
	local rc=$? t
	t=$(grep -m1 '^# Totals' "$o")
	if [ $rc -eq 0 ] && ! grep -q '# SKIP' "$o"; then ok "$n" "$t"
	else ko "$n" "rc=$rc $t; failing: $(failing "$o")"; fi
}
# cannot NAME PATTERN [env...]: the cases that are skipped are exactly those
# whose reasons match PATTERN, there is at least one, and none fails
cannot() {
	local n=$1 pat=$2 o="$W/clean-${1//\//-}.out" f bad= ns=0; shift 2
	env "$@" "$BIN" >"$o" 2>"$o.err"
	for f in $(sed -n 's/^    ok [0-9]* \([a-z0-9_]*\) # SKIP .*/\1/p' "$o"); do
		ns=$((ns + 1))
		grep -q "^    ok [0-9]* $f # SKIP .*$pat" "$o" || bad="$bad $f"
	done
	if [ -n "$(failing "$o")" ]; then ko "$n" "failing: $(failing "$o")"
	elif [ $ns -eq 0 ]; then ko "$n" "no case skipped"
	elif [ -n "$bad" ]; then ko "$n" "skipped without saying '$pat':$bad"
	else ok "$n" "$ns cases skipped, each saying '$pat'"; fi
}
if [ -z "$ONLY" ]; then
	# the suite under ASan+UBSan: an out-of-bounds access of the allocator
	# fails it even where the plain build happens to survive
	mkdir -p "$W/asan"
	cp "$W/base"/*.c "$W/asan/" && cp -r "$W/base/asm" "$W/asan/"
	SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	ok_build=1
	for s in kunit_host asid_kunit kunit_host_init asid context vmid; do
		src=$W/asan/$s.c; [ $s = kunit_host ] && src=$HERE/kunit_host.c
		# shellcheck disable=SC2086
		(cd "$W/asan" && $CC $CFLAGS $SAN -I. -I"$HERE/shim" -c "$src" -o "$s.o") \
			>>"$W/asan/cc.log" 2>&1 || ok_build=0
	done
	# shellcheck disable=SC2086
	[ $ok_build = 1 ] && $CC $SAN -o "$W/asan/kunit_host" "$W/asan"/*.o >>"$W/asan/cc.log" 2>&1 || ok_build=0
	if [ $ok_build = 1 ]; then
		BIN_ASAN=$W/asan/kunit_host
		o=$W/clean-asan.out
		ASAN_OPTIONS=detect_leaks=0 KUNIT_NCPU=4 "$BIN_ASAN" >"$o" 2>"$o.err"
		rc=$?
		if [ $rc -eq 0 ] && ! grep -q '# SKIP' "$o"; then ok "suite/asan-ubsan" "$(grep -m1 '^# Totals' "$o")"
		else ko "suite/asan-ubsan" "rc=$rc; failing: $(failing "$o") $(grep -m1 -E 'ERROR: AddressSanitizer|runtime error' "$o.err" "$o" | head -1)"; fi
	else
		ko "suite/asan-ubsan" "build failed: $(grep -m1 error "$W/asan/cc.log")"
	fi
	clean "suite/4-cpus" 4
	clean "suite/3-cpus" 3
	cannot "suite/2-cpus-skips" "needs 3 possible CPUs: run with -smp 3" KUNIT_NCPU=2
	cannot "suite/1-cpu-skips" "needs [23] possible CPUs: run with -smp [23]" KUNIT_NCPU=1
	cannot "suite/no-kvm-skips" "needs KVM initialised at EL2" KUNIT_NCPU=4 KUNIT_NO_KVM=1
fi

# ---- 2. mutants ----
# mutant ID FILE SED CASES: in $W/m/ID; writes $W/res/ID (status|killers|time)
mutant() {
	local id=$1 file=$2 expr=$3 want=$4 d="$W/m/$1" b t0 rel got k hit=
	t0=$(date +%s.%N)
	mkdir -p "$W/m" "$W/res"
	cp -a "$W/base" "$d"
	rm -f "$d/kunit_host"
	case $file in */asm/*) rel=asm/${file##*/} ;; *) rel=${file##*/} ;; esac
	[ -f "$d/$rel" ] || { echo "error|no file $file|0" >"$W/res/$id"; return; }
	sed -e "$expr" "$W/base/$rel" >"$d/$rel.new" 2>"$d/sed.err" ||
		{ echo "error|sed failed: $(head -c 200 "$d/sed.err")|0" >"$W/res/$id"; return; }
	b=$(diff "$W/base/$rel" "$d/$rel.new" | grep -c '^>')
	if [ "$b" -ne 1 ] || [ "$(diff "$W/base/$rel" "$d/$rel.new" | grep -c '^<')" -ne 1 ]; then
		echo "error|the sed changes $b lines of $file, not one (source drifted?)|0" >"$W/res/$id"
		return
	fi
	mv "$d/$rel.new" "$d/$rel"
	touch "$d/$rel"
	objs "$d" || { echo "error|build failed: $(grep -m1 error "$d/cc.log")|0" >"$W/res/$id"; return; }
	KUNIT_NCPU=4 "$d/kunit_host" >"$d/out" 2>"$d/err"
	got=$(failing "$d/out")
	grep -q '^# Totals' "$d/out" || got="$got(runner crashed)"
	t=$(echo "$(date +%s.%N) - $t0" | bc)
	if [ "$want" = "-" ]; then
		if [ -z "$got" ]; then echo "equivalent|-|$t" >"$W/res/$id"
		else echo "killed-equivalent|$got|$t" >"$W/res/$id"; fi
		return
	fi
	for k in $want; do
		case " $got " in *" $k "*) hit=1 ;; esac
	done
	if [ -z "$got" ]; then echo "survived|-|$t" >"$W/res/$id"
	elif [ -n "$hit" ]; then echo "killed|$got|$t" >"$W/res/$id"
	else echo "wrong-killer|$got|$t" >"$W/res/$id"; fi
	rm -rf "$d"
}

ids=()
declare -A M_FILE M_SED M_WANT M_WHY
while IFS= read -r line; do
	case $line in '#'* | '') continue ;; esac
	id=${line%% :: *}; rest=${line#* :: }
	file=${rest%% :: *}; rest=${rest#* :: }
	expr=${rest%% :: *}; rest=${rest#* :: }
	want=${rest%% :: *}; why=${rest#* :: }
	[ -n "$id" ] && [ -n "$file" ] && [ -n "$expr" ] && [ -n "$want" ] ||
		die "bad line in $MUTANTS: $line"
	[ -n "${M_FILE[$id]:-}" ] && die "duplicate mutant $id"
	# shellcheck disable=SC2254
	if [ -n "$ONLY" ]; then case $id in $ONLY) ;; *) continue ;; esac; fi
	ids+=("$id")
	M_FILE[$id]=$file; M_SED[$id]=$expr; M_WANT[$id]=$want; M_WHY[$id]=$why
done <"$MUTANTS"
[ ${#ids[@]} -gt 0 ] || die "no mutants selected"

running=0
for id in "${ids[@]}"; do
	mutant "$id" "${M_FILE[$id]}" "${M_SED[$id]}" "${M_WANT[$id]}" &
	running=$((running + 1))
	if [ $running -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait

printf '\n%-34s %-9s %6s  %s\n' "mutant" "result" "time" "killed by (failing cases; * = named for it)"
for id in "${ids[@]}"; do
	IFS='|' read -r st got t <"$W/res/$id" || st=error
	marked=
	for k in $got; do
		case " ${M_WANT[$id]} " in *" $k "*) marked="$marked *$k" ;; *) marked="$marked $k" ;; esac
	done
	printf '%-34s %-9s %5.1fs %s\n' "$id" "$st" "${t:-0}" "${marked# }"
done
echo
for id in "${ids[@]}"; do
	IFS='|' read -r st got t <"$W/res/$id" || st=error
	n=$(echo "$got" | wc -w)
	case $st in
	killed) ok "mutant/$id" "killed by $n cases (${M_WHY[$id]})" ;;
	equivalent) ok "mutant/$id" "survives, as an equivalent mutant should (${M_WHY[$id]})" ;;
	survived) ko "mutant/$id" "SURVIVED: ${M_WHY[$id]}"; survived=1 ;;
	wrong-killer) ko "mutant/$id" "killed only by cases not named for it: $got"; survived=1 ;;
	killed-equivalent) ko "mutant/$id" "listed as equivalent but killed by: $got"; survived=1 ;;
	*) ko "mutant/$id" "gate error: $got" ;;
	esac
done

echo "$pass passed, $fail failed ($(printf '%.1f' "$(echo "$(date +%s.%N) - $T0" | bc)") s, ${#ids[@]} mutants, JOBS=$JOBS)"
[ $fail -eq 0 ] && exit 0
[ $survived -eq 1 ] && exit 2
exit 1
