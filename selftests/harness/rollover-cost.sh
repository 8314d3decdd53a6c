#!/bin/bash
# Rollover cost of "KVM: arm64: Do not let a vCPU put overwrite a VMID
# rollover" (found by its subject), measured on the STOCK vmid.c alone:
#   stock = git show stock:arch/arm64/kvm/vmid.c
#   fixed = git show <that commit>:arch/arm64/kvm/vmid.c (stock + only that
#           patch's hunk: the diff is checked to be kvm_arm_vmid_clear_active only)
# both compiled unmodified against the harness shim, driven by rollover_cost.c
# (single thread, deterministic, same seeded schedule for both; see its
# header).  Prints the table.  Env: KSRC, HARNESS, STEPS (1000000),
# SEEDS (20), SEED0 (1), SENS=0 to skip the sensitivity table.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
KSRC=${KSRC:-$(cd "$HERE/../.." && pwd)/build/linux}
HARNESS=$HERE
FIX=$(git -C "$KSRC" log --format=%h -F --grep="KVM: arm64: Do not let a vCPU put overwrite a VMID rollover" stock.. | tail -1)
[ -n "$FIX" ] || { echo "ERROR: no commit \"Do not let a vCPU put overwrite a VMID rollover\" in $KSRC" >&2; exit 1; }
STEPS=${STEPS:-1000000}
SEEDS=${SEEDS:-20}
SEED0=${SEED0:-1}
SENS=${SENS:-1}
B=$(mktemp -d /tmp/rollover-cost.XXXXXX)
trap 'rm -rf "$B"' EXIT
die() { echo "ERROR: $*" >&2; exit 1; }

mkdir -p "$B/stock" "$B/fix" "$B/out"
git -C "$KSRC" show stock:arch/arm64/kvm/vmid.c >"$B/stock/vmid.c" || die "no tag stock"
git -C "$KSRC" show $FIX:arch/arm64/kvm/vmid.c >"$B/fix/vmid.c" || die "no $FIX"
# the fix must be exactly one hunk, inside kvm_arm_vmid_clear_active()
d=$(diff -U0 "$B/stock/vmid.c" "$B/fix/vmid.c" | grep -c '^@@' || true)
[ "$d" = 1 ] || die "stock -> $FIX vmid.c is $d hunks, expected 1"
diff -p -U0 "$B/stock/vmid.c" "$B/fix/vmid.c" | grep -q '^@@.*void kvm_arm_vmid_clear_active' ||
	die "the hunk is not in kvm_arm_vmid_clear_active"
for v in stock fix; do
	gcc -O2 -g -Wall -Wno-unused-function -DKSHIM_NO_YIELD -DNR_CPUS=8 \
		-I"$HARNESS/shim" -iquote "$B/$v" -o "$B/rollsim-$v" "$HERE/rollover_cost.c" -lpthread ||
		die "build $v"
done

# one config: NCPU BITS NVM P [KEEP] -> one table row
row() {
	local n=$1 bits=$2 nvm=$3 p=$4 keep=${5:-0} slow=${6:-0} tag v
	tag="n$n-b$bits-m$nvm-p$p-k$keep-s$slow"
	for v in stock fix; do
		nice -n 10 "$B/rollsim-$v" "$n" "$bits" "$nvm" "$p" "$STEPS" "$SEED0" "$SEEDS" "$keep" "$slow" \
			>"$B/out/$tag.$v" || die "run $v $tag failed"
		[ "$(wc -l <"$B/out/$tag.$v")" = "$SEEDS" ] || die "run $v $tag: missing seeds"
	done
	paste -d' ' "$B/out/$tag.stock" "$B/out/$tag.fix" | awk -v n="$n" -v ids=$((1 << bits)) \
		-v nvm="$nvm" -v p="$p" -v keep="$keep" -v slow="$slow" '
	function f(key, i,   j, a) {	# value of key= in the i-th half of the line
		for (j = 1; j <= NF; j++) {
			split($j, a, "=");
			if (a[1] == key && (--i) == 0) return a[2];
		}
		die = 1; return 0;
	}
	{
		if (f("sched", 1) != f("sched", 2) || f("seed", 1) != f("seed", 2)) { print "ERROR: schedules differ" > "/dev/stderr"; exit 1 }
		rs = f("rollovers", 1); rf = f("rollovers", 2);
		if (rs <= 0) { print "ERROR: no rollover" > "/dev/stderr"; exit 1 }
		r = rf / rs; k++;
		S += rs; F += rf; R += r;
		if (k == 1 || r < mn) mn = r;
		if (k == 1 || r > mx) mx = r;
		qs += f("resv", 1); qf += f("resv", 2); qi += f("resv_idle", 2);
		ss += f("slow", 1); sf += f("slow", 2);
	}
	END {
		if (die) { print "ERROR: parse" > "/dev/stderr"; exit 1 }
		printf "%4d %5d %5d %4.2f %4.2f %4d %10.1f %10.1f  %+7.2f%% %+7.2f%% %+7.2f%%  %5.2f %5.2f (%4.2f) %+6.2f%%\n",
			n, ids, nvm, p, keep, slow, S / k, F / k, 100 * (R / k - 1), 100 * (mn - 1), 100 * (mx - 1),
			qs / k, qf / k, qi / k, 100 * (sf / ss - 1);
	}' || die "aggregate $tag"
}

hdr() {
	echo "NCPU VMIDs   NVM    P KEEP SLOW  rollovers  rollovers  fixed/stock - 1 (per seed)    reserved/rollover  slow paths"
	echo "                                 stock(mean) fixed(mean)   mean     min      max   stock fixed (idle) fixed/stock-1"
}
echo "# $(git -C "$KSRC" log --oneline -1 $FIX); STEPS=$STEPS seeds $SEED0..$((SEED0 + SEEDS - 1)), same schedule per seed for both (checked)"
hdr
for cfg in "4 4" "8 4" "8 8"; do
	set -- $cfg
	for p in 0.1 0.5 0.9; do
		row "$1" "$2" $((4 << $2)) $p
	done
done
if [ "$SENS" != 0 ]; then
	echo
	echo "# sensitivity: VMs (NVM); KEEP (prob. that a load pick leaves a running vCPU running);"
	echo "# SLOW (that many CPUs picked 100x less often: long idle periods)"
	hdr
	for m in 17 32 256; do row 8 4 $m 0.5; done
	for k in 0.5 0.9 0.99; do row 8 4 64 0.5 $k; done
	for k in 0.9 0.99; do row 4 4 64 0.5 $k; done
	for k in 0.9 0.99; do row 8 8 1024 0.5 $k; done
	row 4 4 64 0.5 0 1
	row 8 4 64 0.5 0 2
	row 8 8 1024 0.5 0 2
	row 8 8 1024 0.9 0 2
fi
