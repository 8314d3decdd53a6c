#!/bin/bash
# Benchmark (not a test): instructions of one rollover and of the fast path
# against the number of possible CPUs, stock vs the series, for VMIDs
# (stock arch/arm64/kvm/vmid.c vs the series' lib/asid.c + vmid.c) and
# ASIDs (stock arch/arm64/mm/context.c vs the series' context.c +
# lib/asid.c), all compiled unmodified against shim/ (-O2, no sanitizer,
# -DKSHIM_NO_YIELD -DKSHIM_PLAIN_LOCKS, NR_CPUS fixed, as in a kernel build, whatever the
# sizes) and driven single-threaded
# by cost_sweep.c under valgrind --tool=callgrind, counting only inside the
# switch function (kvm_arm_vmid_update, check_and_switch_context) and its
# callees. For each size NCPU, NCPU simulated CPUs, each running a context
# of its own: the possible-CPU mask has NCPU bits, so flush_context() loops
# over NCPU active/reserved slots.
#   fastpath_ir  per call, F switches to a context with a current ID;
#   rollover_ir  per rollover: the call that rolls over minus a slow-path
#                call that allocates without rolling over (same kind of
#                context, a new one), mean over R rollovers: the
#                generation bump, flush_context() (the loop over the CPUs'
#                slots, the map reset), the flush hook (VMID: the broadcast
#                flush; ASID: the rolling CPU's local flush), the tracepoint
#                stub (series), the map search again (see cost_sweep.c);
#   slowpath_ir  that slow-path call (new context, no rollover);
#   rollcall_ir  the whole rolling call;
#   reswitch_ir  a CPU's first switch after a rollover to the context whose
#                ID it kept reserved (a slow path that looks through all
#                NCPU reserved slots; ASID: with its deferred local flush).
# x86-64 instruction counts of the shimmed C are a PROXY for arm64 (different
# ISA, shim atomics/locks/per-CPU; for_each_possible_cpu is a counted loop
# where the kernel walks cpu_possible_mask with find_next_bit).
#
# Usage: cost-sweep.sh [--tsv FILE] [--svg FILE]
#   --tsv FILE  write the TSV there (default: print it after the table)
#   --svg FILE  plot it with cost-plot.py (python3)
# Env: KSRC (as for check.sh; the series' files from its working tree, stock
# from its tag stock), CPUS ("8 16 32 64 128 256 512"), KINDS ("vmid asid"),
# F (fast calls, 10000), R (rollovers, 4), VMID_BITS (10: more IDs than
# CPUs + 1 at every size; ASIDs are 16 bits, as stock context.c has no
# clamp), NR_CPUS (512, at least the largest size: the compiled code
# depends on it a little, so it does not follow CPUS), EXTRA_CFLAGS (e.g.
# -fno-strict-aliasing, as the kernel builds), CC.
# Output: a table per kind, the fits rollover_ir = a + b*NCPU, "GOAL met" or
# "GOAL not met: ..." (goal: the series' rollover linear in NCPU and the
# series <= stock at every size, fast path and rollover); the goal does not
# set the exit status. Exit 1 on any build/run/parse error, on a count <= 0,
# or when rollover_ir or reswitch_ir does not grow with NCPU.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KSRC=${KSRC:-$TOP/build/linux}
CPUS=${CPUS:-8 16 32 64 128 256 512}
KINDS=${KINDS:-vmid asid}
F=${F:-10000}
R=${R:-4}
export VMID_BITS=${VMID_BITS:-10}
NR_CPUS=${NR_CPUS:-512}
EXTRA_CFLAGS=${EXTRA_CFLAGS:-}
CC=${CC:-gcc}
TSV=
SVG=
T0=$(date +%s)

die() { echo "ERROR: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--tsv) [ $# -ge 2 ] || die "--tsv needs a file"; TSV=$2; shift 2 ;;
	--svg) [ $# -ge 2 ] || die "--svg needs a file"; SVG=$2; shift 2 ;;
	*) die "usage: $0 [--tsv FILE] [--svg FILE]" ;;
	esac
done
command -v valgrind >/dev/null || die "valgrind not installed"
[ -f /usr/include/valgrind/callgrind.h ] || die "no valgrind/callgrind.h (package valgrind)"
[ -d "$KSRC/arch/arm64" ] || die "KSRC=$KSRC is not a kernel tree"
[[ $F =~ ^[1-9][0-9]*$ ]] || die "F='$F' is not a positive number"
[[ $R =~ ^[1-9][0-9]*$ ]] && [ "$R" -le 64 ] || die "R='$R' must be 1..64"
[[ $VMID_BITS =~ ^[0-9]+$ ]] && [ "$VMID_BITS" -ge 2 ] && [ "$VMID_BITS" -le 16 ] ||
	die "VMID_BITS='$VMID_BITS' must be 2..16"
prev=0
for n in $CPUS; do
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] || die "CPUS: '$n' is not a number of CPUs >= 2"
	[ "$n" -gt "$prev" ] || die "CPUS='$CPUS' must be increasing"
	prev=$n
done
[ "$prev" -gt 0 ] || die "CPUS is empty"
[ "$(echo "$CPUS" | wc -w)" -ge 3 ] || die "CPUS: need at least 3 sizes for a fit"
[[ $NR_CPUS =~ ^[0-9]+$ ]] && [ "$NR_CPUS" -ge "$prev" ] ||
	die "NR_CPUS='$NR_CPUS' must be a number >= the largest size $prev"
NR=$prev
for k in $KINDS; do
	case $k in
	vmid) [ $(((1 << VMID_BITS) - 1)) -gt $((NR + 1)) ] ||
		die "VMID_BITS=$VMID_BITS: $(((1 << VMID_BITS) - 1)) VMIDs for $NR CPUs (need more than NCPU + 1)" ;;
	asid) [ "$NR" -lt 65534 ] || die "$NR CPUs: more than 16-bit ASIDs allow" ;;
	*) die "KINDS: unknown kind '$k' (vmid, asid)" ;;
	esac
done

W=$(mktemp -d /tmp/cost-sweep.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/stock" "$W/series/asm"
git -C "$KSRC" show stock:arch/arm64/kvm/vmid.c >"$W/stock/vmid.c" &&
git -C "$KSRC" show stock:arch/arm64/mm/context.c >"$W/stock/context.c" ||
	die "no tag 'stock' in $KSRC"
cp "$KSRC/arch/arm64/lib/asid.c" "$KSRC/arch/arm64/kvm/vmid.c" \
	"$KSRC/arch/arm64/mm/context.c" "$W/series/" &&
cp "$KSRC/arch/arm64/include/asm/asid.h" "$KSRC/arch/arm64/include/asm/asid_trace.h" \
	"$W/series/asm/" || die "series files missing in $KSRC"
for f in vmid.c context.c; do
	grep -q asid_check_context "$W/series/$f" ||
		die "$KSRC/$f does not use the shared allocator: not the series"
done

# -z now: symbols bound at load, so the dynamic linker's lazy binding of
# the first call to a libc function (memcpy, memset) is not counted inside
# the first rollover (~700 instructions, 1 of R rollovers).
CFLAGS="-O2 -g -Wall -Wno-unused-function -DKSHIM_NO_YIELD -DKSHIM_PLAIN_LOCKS -DNR_CPUS=$NR_CPUS $EXTRA_CFLAGS -I$HERE/shim -Wl,-z,now"
# build KIND VARIANT: $W/sweep-KIND-VARIANT (warnings of the kernel files are
# theirs: logged, not fatal)
build() {
	local k=$1 v=$2 out=$W/sweep-$1-$2 src=$W/$2 args
	case $k-$v in
	vmid-stock) args=("$src/vmid.c") ;;
	vmid-series) args=(-I"$src" "$src/asid.c" "$src/vmid.c") ;;
	asid-stock) args=(-DSWEEP_ASID "-DCONTEXT_C=\"$src/context.c\"") ;;
	asid-series) args=(-I"$src" -DSWEEP_ASID "-DCONTEXT_C=\"$src/context.c\"" "$src/asid.c") ;;
	esac
	# shellcheck disable=SC2086
	$CC $CFLAGS -o "$out" "$HERE/cost_sweep.c" "${args[@]}" >"$out.cc.log" 2>&1 ||
		{ cat "$out.cc.log"; die "build $k $v failed"; }
}
fn_of() { [ "$1" = vmid ] && echo kvm_arm_vmid_update || echo check_and_switch_context; }

# dumps OUT LABEL: the Ir of each dump whose trigger is "LABEL ...", one per
# line as "<calls> <Ir>"; fails on a dump whose summary and totals differ
dumps() {
	local f t s c
	for f in "$1".*; do
		t=$(sed -n "s/^desc: Trigger: Client Request: $2 \([0-9]*\)$/\1/p" "$f")
		[ -n "$t" ] || continue
		s=$(sed -n 's/^summary: *\([0-9]*\)$/\1/p' "$f")
		c=$(sed -n 's/^totals: *\([0-9]*\)$/\1/p' "$f")
		[ -n "$s" ] && [ "$s" = "$c" ] || { echo "ERROR: $f: summary '$s' != totals '$c'" >&2; return 1; }
		echo "$t $s"
	done
}
# mean OUT LABEL COUNT: total Ir of the LABEL dumps / their calls, checking
# that there are COUNT dumps, none of them zero
mean() {
	dumps "$1" "$2" | awk -v want="$3" -v what="$2" '
		{ n++; calls += $1; ir += $2; if ($2 <= 0) bad = 1 }
		END {
			if (n != want || bad || !calls) {
				printf "ERROR: %d \"%s\" dumps (want %d)%s\n", n, what, want,
					bad ? ", one with no instructions" : "" > "/dev/stderr"
				exit 1
			}
			printf "%.2f\n", ir / calls
		}'
}

# run KIND VARIANT NCPU: one TSV row
run() {
	local k=$1 v=$2 n=$3 b=$W/sweep-$1-$2 o=$W/cg.$1.$2.$3 ra fp ro sl rs
	NCPU=$n "$b" 1 "$R" >"$o.native" 2>&1 &&
		ra=$(sed -n 's/^roll_at=\([0-9,]*\)$/\1/p' "$o.native") && [ -n "$ra" ] ||
		{ tail -n 20 "$o.native" >&2; die "native run $k $v NCPU=$n failed"; }
	NCPU=$n ROLL_AT=$ra nice valgrind --tool=callgrind --callgrind-out-file="$o" \
		--toggle-collect="$(fn_of "$k")" "$b" "$F" "$R" >"$o.log" 2>&1 ||
		{ tail -n 20 "$o.log" >&2; die "callgrind run $k $v NCPU=$n failed"; }
	grep -q "^kind=$k ncpu=$n .* rollovers=$R .*warns=0$" "$o.log" ||
		{ tail -n 20 "$o.log" >&2; die "no summary from $k $v NCPU=$n"; }
	fp=$(mean "$o" fast 1) && ro=$(mean "$o" roll "$R") && sl=$(mean "$o" slow "$R") &&
		rs=$(mean "$o" reswitch "$R") || die "parse of the $k $v NCPU=$n dumps failed"
	awk -v n="$n" -v k="$k" -v v="$v" -v fp="$fp" -v ro="$ro" -v sl="$sl" -v rs="$rs" 'BEGIN {
		d = ro - sl
		if (fp <= 0 || d <= 0 || sl <= 0 || rs <= 0) exit 1
		printf "%d\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", n, k, v, fp, d, sl, ro, rs
	}' || die "$k $v NCPU=$n: a count <= 0 (fast $fp, roll $ro, slow $sl, reswitch $rs)"
	rm -f "$o".*[0-9]
}

rows=$W/rows.tsv
printf 'size\tkind\tvariant\tfastpath_ir\trollover_ir\tslowpath_ir\trollcall_ir\treswitch_ir\n' >"$rows"
for k in $KINDS; do
	for v in stock series; do
		build "$k" "$v"
		for n in $CPUS; do
			run "$k" "$v" "$n" >>"$rows" || exit 1
		done
	done
done

# ---- report: table, growth check, fits, goal
awk -F'\t' -v vb="$VMID_BITS" -v F="$F" -v R="$R" -v nrc="$NR_CPUS" -v xcf="$EXTRA_CFLAGS" '
NR == 1 { next }
{
	key = $2 SUBSEP $3
	if (!(($2) in seenk)) { seenk[$2] = 1; kinds[++nk] = $2 }
	if (!(($1) in seenn)) { seenn[$1] = 1; sizes[++ns] = $1 }
	fp[key, $1] = $4; ro[key, $1] = $5; sl[key, $1] = $6; rc[key, $1] = $7; rs[key, $1] = $8
}
function ratio(a, b) { return b > 0 ? sprintf("%.3f", a / b) : "-" }
# over(WHAT, N, R): note that series > stock for WHAT at size N (ratio R)
function over(what, n, r) {
	if (!(what in ovn)) { ovw[++nov] = what; ovlo[what] = ovhi[what] = r }
	ovn[what] = ovn[what] (ovn[what] == "" ? "" : ",") n
	if (r < ovlo[what]) ovlo[what] = r
	if (r > ovhi[what]) ovhi[what] = r
}
function fit(kind, var, arr,    i, x, y, sx, sy, sxx, sxy, m, a, b, e, worst) {
	m = ns; sx = sy = sxx = sxy = 0
	for (i = 1; i <= ns; i++) {
		x = sizes[i]; y = arr[kind SUBSEP var, x]
		sx += x; sy += y; sxx += x * x; sxy += x * y
	}
	b = (m * sxy - sx * sy) / (m * sxx - sx * sx); a = (sy - b * sx) / m
	worst = 0
	for (i = 1; i <= ns; i++) {
		x = sizes[i]; y = arr[kind SUBSEP var, x]
		e = (y - (a + b * x)) / y; if (e < 0) e = -e
		if (e > worst) worst = e
	}
	FA = a; FB = b; FW = worst
}
END {
	bad = 0; goal = ""
	for (j = 1; j <= nk; j++) {
		k = kinds[j]; s = k SUBSEP "stock"; l = k SUBSEP "series"
		printf "\n# %s (%s): x86-64 Ir per operation, stock vs series (ratio = series/stock)\n",
			toupper(k), k == "vmid" ? "VMID_BITS=" vb ", broadcast flush" : "16-bit ASIDs, deferred flush"
		printf "%6s | %9s %9s %6s | %10s %10s %6s | %9s %9s | %9s %9s %6s\n", "NCPU",
			"fast stk", "fast ser", "ratio", "roll stk", "roll ser", "ratio",
			"slow stk", "slow ser", "resw stk", "resw ser", "ratio"
		for (i = 1; i <= ns; i++) {
			n = sizes[i]
			printf "%6d | %9.2f %9.2f %6s | %10.2f %10.2f %6s | %9.2f %9.2f | %9.2f %9.2f %6s\n", n,
				fp[s, n], fp[l, n], ratio(fp[l, n], fp[s, n]),
				ro[s, n], ro[l, n], ratio(ro[l, n], ro[s, n]),
				sl[s, n], sl[l, n], rs[s, n], rs[l, n], ratio(rs[l, n], rs[s, n])
			if (ro[l, n] > ro[s, n])
				over(k " rollover", n, ro[l, n] / ro[s, n])
			if (fp[l, n] > fp[s, n])
				over(k " fast path", n, fp[l, n] / fp[s, n])
			for (vv = 1; vv <= 2; vv++) {
				v = vv == 1 ? "stock" : "series"; kv = k SUBSEP v
				if (i > 1 && ro[kv, n] <= ro[kv, sizes[i - 1]]) {
					printf "ERROR: %s %s rollover_ir does not grow from NCPU=%d to %d (%.2f -> %.2f)\n",
						k, v, sizes[i - 1], n, ro[kv, sizes[i - 1]], ro[kv, n]
					bad = 1
				}
				if (i > 1 && rs[kv, n] <= rs[kv, sizes[i - 1]]) {
					printf "ERROR: %s %s reswitch_ir does not grow from NCPU=%d to %d (%.2f -> %.2f)\n",
						k, v, sizes[i - 1], n, rs[kv, sizes[i - 1]], rs[kv, n]
					bad = 1
				}
			}
		}
		for (vv = 1; vv <= 2; vv++) {
			v = vv == 1 ? "stock" : "series"; kv = k SUBSEP v
			fit(k, v, ro)
			printf "# fit %s %-6s rollover_ir = %.1f + %.3f*NCPU  max |residual|/value %.2f%%\n",
				k, v, FA, FB, 100 * FW
			if (v == "series" && FW > 0.05)
				goal = goal sprintf("; %s series rollover not linear (residual %.1f%%)", k, 100 * FW)
			fit(k, v, rs)
			printf "# fit %s %-6s reswitch_ir = %.1f + %.3f*NCPU  max |residual|/value %.2f%%\n",
				k, v, FA, FB, 100 * FW
			lo = hi = fp[kv, sizes[1]]
			for (i = 2; i <= ns; i++) {
				if (fp[kv, sizes[i]] < lo) lo = fp[kv, sizes[i]]
				if (fp[kv, sizes[i]] > hi) hi = fp[kv, sizes[i]]
			}
			printf "# %s %-6s fastpath_ir %s over NCPU (%.2f..%.2f)\n", k, v,
				lo == hi ? "constant" : "NOT constant", lo, hi
		}
	}
	printf "\n# F=%d fast calls, R=%d rollovers per size, NR_CPUS=%d%s; linear = max |residual|/value <= 5%%\n",
		F, R, nrc, xcf == "" ? "" : ", " xcf
	for (j = 1; j <= nov; j++)
		goal = goal sprintf("; %s series > stock at NCPU=%s (ratio %.3f..%.3f)", ovw[j],
			ovn[ovw[j]], ovlo[ovw[j]], ovhi[ovw[j]])
	if (goal == "")
		print "GOAL met: the series rollover is linear in NCPU and series <= stock at every size (fast path and rollover)"
	else
		print "GOAL not met: " substr(goal, 3)
	exit bad
}' "$rows" || die "the sweep did not measure what it names (see above)"

if [ -n "$TSV" ]; then
	cp "$rows" "$TSV" || die "cannot write $TSV"
	echo "# TSV: $TSV"
else
	echo
	cat "$rows"
fi
if [ -n "$SVG" ]; then
	python3 "$HERE/cost-plot.py" "$rows" "$SVG" || die "cost-plot.py failed"
	echo "# SVG: $SVG"
fi
echo "# wall time: $(($(date +%s) - T0)) s (sizes: $CPUS; kinds: $KINDS)"
