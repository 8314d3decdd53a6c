#!/bin/bash
# Benchmark (not a test): deterministic instruction counts of the VMID
# allocator, stock vmid.c vs the series' lib/asid.c + vmid.c, both compiled
# unmodified against shim/ (-O2, no sanitizer, -DKSHIM_NO_YIELD -DKSHIM_PLAIN_LOCKS) and run
# single-threaded (vmid_cost.c) under valgrind --tool=callgrind, counting
# only inside kvm_arm_vmid_update() (inclusive of its callees).
#   fastpath: Ir(fast 1000+F) - Ir(fast 1000), divided by F calls
#   rollover: Ir(roll 10+R) - Ir(roll 10), divided by R rollovers; the
#             round-robin over 2^VMID_BITS VMs makes each generation one
#             rollover (flush_context + flush hook + tracepoint stub) plus
#             ~2^VMID_BITS - NCPU slow-path allocations; also per call.
# Differencing cancels the init and first-allocation costs.
# x86-64 instruction counts of the shimmed C are a PROXY for the arm64 fast
# path (different ISA, shim atomics/locks/per-CPU instead of the kernel's).
# KSRC as for check.sh.  Env: F (default 100000), R (default 200),
# VMID_BITS (default 8), NCPU (default 4; more sizes the shim's arrays).
# Exit 0 with the figures, 1 on any build/run/parse error.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KSRC=${KSRC:-$TOP/build/linux}
F=${F:-100000}
R=${R:-200}
export VMID_BITS=${VMID_BITS:-8} NCPU=${NCPU:-4}
CC=${CC:-gcc}
# -z now: no lazy binding by the dynamic linker inside the counted calls
# (differencing cancels it here, but the runs stay comparable with
# cost-sweep.sh, where it does not)
CFLAGS="-O2 -g -Wall -Wno-unused-function -DKSHIM_NO_YIELD -DKSHIM_PLAIN_LOCKS -I$HERE/shim -Wl,-z,now"
# the shim's per-CPU arrays hold NR_CPUS (4 unless set): room for NCPU
[ "$NCPU" -le 4 ] || CFLAGS="$CFLAGS -DNR_CPUS=$NCPU"

die() { echo "ERROR: $*"; exit 1; }
command -v valgrind >/dev/null || die "valgrind not installed"
[ -d "$KSRC/arch/arm64" ] || die "KSRC=$KSRC is not a kernel tree"
W=$(mktemp -d /tmp/vmid-cost.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/stock" "$W/lib/asm"
git -C "$KSRC" show stock:arch/arm64/kvm/vmid.c >"$W/stock/vmid.c" ||
	die "no tag 'stock' in $KSRC"
cp "$KSRC/arch/arm64/lib/asid.c" "$KSRC/arch/arm64/kvm/vmid.c" "$W/lib/" &&
cp "$KSRC/arch/arm64/include/asm/asid.h" "$KSRC/arch/arm64/include/asm/asid_trace.h" "$W/lib/asm/" ||
	die "series files missing in $KSRC"

# shellcheck disable=SC2086
$CC $CFLAGS -o "$W/cost-stock" "$HERE/vmid_cost.c" "$W/stock/vmid.c" 2>"$W/cc.err" ||
	{ cat "$W/cc.err"; die "build stock failed"; }
# shellcheck disable=SC2086
$CC $CFLAGS -I"$W/lib" -o "$W/cost-lib" "$HERE/vmid_cost.c" "$W/lib/asid.c" "$W/lib/vmid.c" 2>"$W/cc.err" ||
	{ cat "$W/cc.err"; die "build lib failed"; }

# ir VARIANT MODE COUNT: Ir collected inside kvm_arm_vmid_update
ir() {
	local o="$W/cg.$1.$2.$3" v
	nice valgrind --tool=callgrind --callgrind-out-file="$o" \
		--toggle-collect=kvm_arm_vmid_update "$W/cost-$1" "$2" "$3" \
		>"$o.log" 2>&1 || { cat "$o.log" >&2; die "callgrind run $1 $2 $3 failed"; }
	v=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$o")
	[ -n "$v" ] && [ "$v" -gt 0 ] || die "no Ir total in $o"
	grep -q "^calls=" "$o.log" || die "no summary from $1 $2 $3"
	echo "$v"
}
calls() { sed -n 's/^calls=\([0-9]*\).*/\1/p' "$W/cg.$1.$2.$3.log"; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

declare -A FP RO RC
for v in stock lib; do
	a=$(ir $v fast 1000) || exit 1
	b=$(ir $v fast $((1000 + F))) || exit 1
	FP[$v]=$(div $((b - a)) "$F")
	a=$(ir $v roll 10) || exit 1
	b=$(ir $v roll $((10 + R))) || exit 1
	RO[$v]=$(div $((b - a)) "$R")
	RC[$v]=$(div $((b - a)) $(( $(calls $v roll $((10 + R))) - $(calls $v roll 10) )))
done
n=$(git -C "$KSRC" rev-list --count stock..HEAD 2>/dev/null || echo "?")
dirty=$(git -C "$KSRC" diff --quiet HEAD -- arch/arm64/lib arch/arm64/kvm/vmid.c arch/arm64/include/asm/asid.h 2>/dev/null || echo ", uncommitted changes")
echo "# callgrind (x86-64 Ir of the shimmed C, a proxy for arm64; VMID_BITS=$VMID_BITS NCPU=$NCPU F=$F R=$R; series files at $n patches over stock$dirty)"
echo "# callgrind: fastpath instr/call stock=${FP[stock]} lib=${FP[lib]} ratio=$(div "${FP[lib]}" "${FP[stock]}")"
echo "# callgrind: rollover instr/rollover stock=${RO[stock]} lib=${RO[lib]} ratio=$(div "${RO[lib]}" "${RO[stock]}")"
echo "# callgrind: rollover-churn instr/call stock=${RC[stock]} lib=${RC[lib]} ratio=$(div "${RC[lib]}" "${RC[stock]}")"
