#!/bin/bash
# herd7 check of the allocator's litmus tests (run by scripts/litmus.sh,
# which finds or builds herd7): each file's "Result:" line (Never,
# Sometimes or Always) must be what herd7 observes. The series' tests
# live in the kernel tree, Documentation/arch/arm64/litmus/ (C tests for
# LKMM, and AArch64 ones where the code relies on an Armv8 ordering that
# LKMM lacks); more AArch64 ones (*+lse, *+llsc) in this directory.
#   1. the tool: some of the kernel tree's own tools/memory-model/
#      litmus-tests, Never and Sometimes ones, must give their Result;
#   2. every *.litmus of the kernel tree's Documentation/arch/arm64/litmus/
#      and of this directory (C tests under LKMM, linux-kernel.cfg of the
#      tree; AArch64 tests under herd7's aarch64.cat); a kernel tree
#      without any (one without the series) is a failure;
#   3. the checker itself: copies with a wrong or no Result line must be
#      reported as failures.
# Prints TAP lines "ok N name # model expected got states time" and a last
# line "N passed, N failed". Exit: 0 all good, 1 tool problem, 2 a test
# disagrees with its Result line.
#   HERD7  herd7 binary (required)   MM  the tree's tools/memory-model/
#   LITMUS_CPU_SECONDS  CPU time per herd7 run (default 60; a run takes
#               under 10 s): scripts/cpu-budget.py, a CPU-time budget that
#               load cannot reach, with a wall-clock backstop of 100 times it
#   KERNEL_LITMUS_DIR  the kernel tree's tests (default:
#               $MM/../../Documentation/arch/arm64/litmus)
#   LITMUS_DIR  the other tests (default: this directory); with
#               LITMUS_NESTED=1 only part 2 runs, on LITMUS_DIR alone (the
#               checker's own test uses both)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LITMUS_DIR=${LITMUS_DIR:-$HERE}
LITMUS_NESTED=${LITMUS_NESTED:-0}
HERD7=${HERD7:-herd7}
MM=${MM:?MM=<kernel tree>/tools/memory-model is required}
KERNEL_LITMUS_DIR=$(realpath -m "${KERNEL_LITMUS_DIR:-$MM/../../Documentation/arch/arm64/litmus}")
LITMUS_CPU_SECONDS=${LITMUS_CPU_SECONDS:-60}
case $LITMUS_CPU_SECONDS in '' | *[!0-9]* | 0) echo "LITMUS_CPU_SECONDS='$LITMUS_CPU_SECONDS' is not a number of seconds"; exit 1 ;; esac
BUDGET=${CPU_BUDGET:-$(cd "$HERE/../.." && pwd)/scripts/cpu-budget.py}
# Kernel tree tests that validate herd7 + LKMM: three Never, three
# Sometimes, covering the shapes used here (R: the stock VMID bug; MP/ISA2
# with locks: the flush count; SB).
VALIDATE="R+poonceonces R+fencembonceonces SB+poonceonces SB+fencembonceonces
MP+poonceonces ISA2+pooncelock+pooncelock+pombonce"

command -v "$HERD7" >/dev/null 2>&1 || { echo "herd7 '$HERD7' not found"; exit 1; }
[ -f "$MM/linux-kernel.cfg" ] || { echo "no $MM/linux-kernel.cfg"; exit 1; }
W=$(mktemp -d /tmp/litmus-check.XXXXXX)
trap 'rm -rf "$W"' EXIT
n=0 pass=0 fail=0 toolerr=0

# check1 FILE NAME N: run herd7 on FILE, compare with its Result line.
# Prints TAP line number N; returns 0 if they agree, 1 if not, 2 on a tool
# or test-file error (no Result line, herd7 failed, no Observation).
check1() {
	local f=$1 name=$2 n=$3 arch model want out rc got states t t0 rep
	out=$W/herd-$n.out
	want=$(sed -n 's/^[[:space:](*]*Result:[[:space:]]*\([A-Za-z]*\).*/\1/p' "$f" | head -n1)
	arch=$(awk 'NF { print $1; exit }' "$f")
	case $arch in
	C) model=lkmm; set -- -I "$MM" -conf linux-kernel.cfg ;;
	AArch64) model=aarch64; set -- -model aarch64.cat ;;
	*) echo "not ok $n $name # first word '$arch': neither a C nor an AArch64 litmus test"; return 2 ;;
	esac
	case $want in
	Never | Sometimes | Always) ;;
	*) echo "not ok $n $name # model=$model: no 'Result: Never|Sometimes|Always' line"; return 2 ;;
	esac
	t0=$(date +%s.%N)
	"$BUDGET" --name "herd7 $name" "$LITMUS_CPU_SECONDS" "$HERD7" "$@" "$f" >"$out" 2>&1
	rc=$?
	t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	got=$(awk '$1 == "Observation" { print $3; exit }' "$out")
	states=$(awk '$1 == "States" { print $2; exit }' "$out")
	if [ $rc -ne 0 ] || [ -z "$got" ]; then
		echo "not ok $n $name # model=$model expected=$want: herd7 rc=$rc, $(grep -m1 '^cpu-budget: TIMEOUT: ' "$out" || grep -m1 -v '^$' "$out" | cut -c1-160)"
		return 2
	fi
	# what the runner measured, with CPU_BUDGET_REPORT=1
	rep=$(sed -n 's/^cpu-budget: [^:]*: //p' "$out" | head -n1)
	if [ "$got" = "$want" ]; then
		echo "ok $n $name # model=$model expected=$want got=$got states=$states time=${t}s${rep:+ (herd7: $rep)}"
		return 0
	fi
	echo "not ok $n $name # model=$model expected=$want got=$got states=$states time=${t}s"
	sed -n '/^Test /,/^Time /p' "$out" | sed 's/^/# /'
	return 1
}

# Runs are independent: up to JOBS at once (default: the number of CPUs),
# printed in order. queue N FILE NAME starts one; drain prints them all.
JOBS=${JOBS:-$(nproc)}
order=()
queue() {
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	order+=("$1")
	(
		check1 "$2" "$3" "$1" >"$W/$1.line" 2>&1
		echo $? >"$W/$1.rc"
	) &
}
drain() {
	local i rc
	wait
	for i in "${order[@]}"; do
		cat "$W/$i.line"
		rc=$(cat "$W/$i.rc" 2>/dev/null || echo 2)
		case $rc in
		0) pass=$((pass + 1)) ;;
		1) fail=$((fail + 1)) ;;
		*) fail=$((fail + 1)) toolerr=1 ;;
		esac
	done
	order=()
}

echo "# herd7: $("$HERD7" -version 2>&1 | head -n1); LKMM: $MM; $JOBS at once"
[ "$LITMUS_NESTED" = 1 ] && VALIDATE=
[ -n "$VALIDATE" ] && echo "# 1. herd7 + LKMM on tests of the kernel tree"
for t in $VALIDATE; do
	n=$((n + 1))
	f=$MM/litmus-tests/$t.litmus
	if [ ! -f "$f" ]; then
		fail=$((fail + 1)) toolerr=1
		echo "not ok $n lkmm-validate/$t # missing $f"
		continue
	fi
	queue $n "$f" "lkmm-validate/$t"
done
drain

# litmus_files DIR: the *.litmus of DIR, none if there are none.
litmus_files() {
	local f
	for f in "$1"/*.litmus; do
		[ -f "$f" ] && printf '%s\n' "$f"
	done
}

if [ "$LITMUS_NESTED" = 1 ]; then
	echo "# 2. the allocator's orderings ($LITMUS_DIR)"
	mapfile -t tests < <(litmus_files "$LITMUS_DIR")
	[ ${#tests[@]} -gt 0 ] || { echo "no litmus test in $LITMUS_DIR"; exit 1; }
	for f in "${tests[@]}"; do
		n=$((n + 1))
		queue $n "$f" "$(basename "$f" .litmus)"
	done
	drain
	echo "$pass passed, $fail failed"
	[ $fail -eq 0 ] && exit 0
	[ $toolerr -eq 1 ] && exit 1
	exit 2
fi

echo "# 2. the allocator's orderings: the kernel tree's ($KERNEL_LITMUS_DIR), then $LITMUS_DIR"
mapfile -t ktests < <(litmus_files "$KERNEL_LITMUS_DIR")
mapfile -t tests < <(litmus_files "$LITMUS_DIR")
[ ${#tests[@]} -gt 0 ] || { echo "no litmus test in $LITMUS_DIR"; exit 1; }
n=$((n + 1))
if [ ${#ktests[@]} -eq 0 ]; then
	# No test to run is not a pass: the tree lacks the series' patches.
	fail=$((fail + 1))
	echo "not ok $n kernel-tree-tests # no *.litmus in $KERNEL_LITMUS_DIR: a kernel tree without the series? (TREE=<tree with it>)"
else
	pass=$((pass + 1))
	echo "ok $n kernel-tree-tests # ${#ktests[@]} in $KERNEL_LITMUS_DIR"
fi
for f in "${ktests[@]}"; do
	n=$((n + 1))
	queue $n "$f" "asid/$(basename "$f" .litmus)"
done
for f in "${tests[@]}"; do
	n=$((n + 1))
	queue $n "$f" "$(basename "$f" .litmus)"
done
drain

echo "# 3. the checker: wrong expectations must be reported"
# test_file NAME: the test NAME, from the kernel tree or from this directory.
test_file() {
	local d
	for d in "$KERNEL_LITMUS_DIR" "$HERE"; do
		[ -f "$d/$1.litmus" ] && { printf '%s\n' "$d/$1.litmus"; return 0; }
	done
	return 1
}
# selftest NAME SOURCE SED [WANT]: a copy of SOURCE edited by SED must make
# check1 fail with status WANT (default 1: a disagreement; 2: a bad file).
selftest() {
	local name=$1 src=$2 expr=$3 want=${4:-1} rc line f
	n=$((n + 1))
	if ! f=$(test_file "$src"); then
		fail=$((fail + 1))
		echo "not ok $n checker-selftest/$name # no $src.litmus in $KERNEL_LITMUS_DIR or $HERE"
		return
	fi
	mkdir -p "$W/selftest"
	sed "$expr" "$f" >"$W/selftest/$name.litmus"
	check1 "$W/selftest/$name.litmus" "$name" $n >"$W/selftest/$name.out"
	rc=$?
	line=$(head -n1 "$W/selftest/$name.out")
	if [ "$rc" = "$want" ]; then
		pass=$((pass + 1))
		echo "ok $n checker-selftest/$name # detected: ${line#* # }"
	else
		fail=$((fail + 1))
		echo "not ok $n checker-selftest/$name # NOT detected (check1 rc=$rc, want $want): ${line#* # }"
	fi
}
selftest never-said-sometimes vmid-sched-out-vs-rollover+rmw 's/Result: Never/Result: Sometimes/'
selftest sometimes-said-never vmid-sched-out-vs-rollover+plain-store 's/Result: Sometimes/Result: Never/'
selftest aarch64-sometimes-said-never vmid-sched-out-vs-rollover+str+lse 's/Result: Sometimes/Result: Never/'
selftest aarch64-never-said-sometimes asid-fastpath-vs-rollover+lse 's/Result: Never/Result: Sometimes/'
selftest no-result-line asid-fastpath-vs-rollover '/Result:/d' 2
selftest herd7-rejects-it asid-fastpath-vs-rollover 's/atomic_xchg_relaxed/atomic_xchg_bogus/' 2
# The whole run, not just one comparison: a directory with one right and
# one wrong test must end in "1 passed, 1 failed" and exit 2.
n=$((n + 1))
mkdir -p "$W/nested"
if right=$(test_file asid-fastpath-vs-rollover) &&
	wrong=$(test_file asid-fastpath-vs-rollover+plain-store); then
	cp "$right" "$W/nested/"
	sed 's/Result: Sometimes/Result: Never/' "$wrong" >"$W/nested/wrong.litmus"
	LITMUS_DIR=$W/nested LITMUS_NESTED=1 "$0" >"$W/nested.out" 2>&1
	rc=$?
	last=$(tail -n1 "$W/nested.out")
else
	rc=- last="no asid-fastpath-vs-rollover{,+plain-store}.litmus in $KERNEL_LITMUS_DIR or $HERE"
fi
if [ "$rc" = 2 ] && [ "$last" = "1 passed, 1 failed" ]; then
	pass=$((pass + 1))
	echo "ok $n checker-selftest/run-fails-on-a-wrong-result # detected: rc=$rc, $last"
else
	fail=$((fail + 1))
	echo "not ok $n checker-selftest/run-fails-on-a-wrong-result # NOT detected: rc=$rc, last line '$last'"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && exit 0
[ $toolerr -eq 1 ] && exit 1
exit 2
