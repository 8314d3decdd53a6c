#!/usr/bin/env bash
# "make bench": stock vs patched kernel, side by side in one run.
# A benchmark, never part of make check; its figures do not set the exit
# status (exit 0 also when a goal is not met), failures to produce them do.
#
#  1. builds, one after the other, the stock kernel (tag "stock" of
#     build/linux, checked out as the worktree build/stock-tree, into
#     build/kernel-stock) and the patched one (build/linux HEAD, into
#     build/kernel-bench), both from the same fragments BENCH_CONFIGS
#     (stock with AUDIT_MISSING=skip: it lacks the series' debug option),
#     and, for the "its" scenario, stock + BENCH_STOCKFIX alone
#     (build/stockfix-tree into build/kernel-stockfix);
#  2. runs selftests/harness/cost.sh (callgrind instruction counts of the
#     VMID allocator, stock vs library; host only, deterministic) into
#     $RESULTS/bench-cost.txt, and selftests/harness/cost-sweep.sh (the same
#     for VMIDs and ASIDs against NCPU 8..512) into bench-cost-sweep.{txt,tsv,svg};
#  3. builds one initramfs per kernel (the L2 guests boot the same Image as
#     L1; stock + fix boots stock's) with the guest stage "bench"
#     (selftests/guest/stage-bench.sh);
#  4. boots stock, [stock + fix,] patched, stock ... for BENCH_PAIRS pairs,
#     each boot running the scenarios (stock + fix only "its", plain stock
#     all others), and
#     after each pair, when BENCH_VMID_BITS != 0, the patched kernel once
#     more with kvm-arm.vmid_bits=BENCH_VMID_BITS running only the nested
#     scenario (the clamp exists only in the patched kernel: that figure is
#     absolute, patched only);
#  5. scripts/bench-report.py: bench.json, a "## Benchmarks" section in
#     SUMMARY.md, PNG plots, Documentation/benchmarks.md, and the table.
#
# Results: $RESULTS_DIR/<UTC timestamp>/ (and the link results/latest):
# bench-<kind>[-vmid<N>|-fix]-<pair>.log (consoles; first line the QEMU command),
# bench-cost.txt, bench.env (settings), bench-boots.tsv, bench.log.
#
# Variables (full / BENCH_QUICK=1 defaults):
#   BENCH_PAIRS (3 / 1)       stock+patched boot pairs
#   BENCH_QUICK (0)           1: one pair and smaller scenario sizes
#   BENCH_REBUILD (1)         0: do not rebuild a kernel whose Image exists
#   BENCH_LAVA (0)            the boots as LAVA jobs (Documentation/lava.md):
#                             "pack": steps 1-3, then write the pack of
#                             BENCH_LAVA_OUT (default build/lava-bench) for
#                             a lab, no boot; "run": also run each boot of
#                             step 4 as its job under lava-run on this
#                             machine, its console taken from the LAVA log
#                             by scripts/lava-collect.py --bench
#   BENCH_LAVA_URL (file://BENCH_LAVA_OUT)  where a lab fetches the pack from
#   BENCH_QEMU_EXTRA ($QEMU_EXTRA)  extra QEMU options for every L1 boot, e.g.
#                             "-icount shift=0,sleep=off": guest time then
#                             follows executed instructions, and TCG runs
#                             all vCPUs in one host thread (whether this works
#                             with virtualization=on and nested guests:
#                             measured: see Documentation/benchmarks.md)
#   BENCH_SCENARIOS ("hackbench_l1 nested_rollover lpi exit_cost its")
#   BENCH_STOCKFIX ("KVM: arm64: vgic-its: Reschedule while scanning the ITS
#                             tables on restore")  subject of the commit of the
#                             series that the "its" scenario's stock side
#                             carries: stock restores of the layouts it
#                             times trip the soft-lockup detector, so that
#                             scenario boots stock + this fix alone (worktree
#                             build/stockfix-tree, built into
#                             build/kernel-stockfix, log bench-stock-fix-<pair>.log)
#   BENCH_PATCHED_REV (HEAD)  revision of build/linux to compare with stock,
#                             e.g. the last patch of a part of the series,
#                             to find which patches make a difference; other
#                             than HEAD it is checked out as the worktree
#                             build/bench-rev-tree and built into
#                             build/kernel-bench-rev; needs BENCH_VMID_BITS=0
#   BENCH_STOCK_REV (stock)   revision of build/linux that stands for stock:
#                             stock plus the postings that a posting under
#                             test needs (e.g. BENCH_STOCK_REV=part/5-vgic-its-tests
#                             BENCH_PATCHED_REV=part/6-vgic-its-cache), so
#                             that a cover's figures measure that posting
#                             alone; other than stock it is checked out as
#                             the worktree build/bench-base-tree and built
#                             into build/kernel-bench-base, and the "its"
#                             scenario's stock side is it plus those
#                             BENCH_STOCKFIX commits it lacks (it itself
#                             when it has them all)
#   BENCH_CONFIGS ("base kvm test kunit bench")  fragments for both kernels
#   BENCH_COST (1)            0: skip cost.sh and cost-sweep.sh
#   BENCH_TIMEOUT ($TIMEOUT or 1800 / 900)  seconds per boot
#   BENCH_VMID_BITS (3)       VMID width of the extra patched boot; 0: none
#                             (3: 7 VMIDs for the 8 live guests; at 4 bits
#                             they fit and no rollover happens)
#   hackbench_l1:    BENCH_HB_L1_GROUPS (10 / 4), BENCH_HB_L1_LOOPS (40 / 40),
#                    BENCH_HB_L1_RUNS (3 / 2): hackbench -s 512 -l LOOPS -g GROUPS -f 25 -P
#   nested_rollover: BENCH_L2_GUESTS (8 / 4) at once, BENCH_L2_SMP (2),
#                    BENCH_L2_MEM (256 MiB), BENCH_L2_RUNS (5 / 2) hackbench
#                    runs per guest with BENCH_L2_HACKBENCH_ARGS
#                    ("-s 512 -l 20 -g 2 -f 5 -P"), BENCH_L2_TIMEOUT (900 / 600)
#   lpi:             BENCH_LPI_CONFIGS (';'-separated vgic_lpi_stress argument
#                    lists, upstream's five configurations scaled to TCG),
#                    BENCH_LPI_CHURN_ARGS ("-c -v 2 -d 2 -i 2000 -r 200 -w 1" / -i 1000)
#                    run with -e E for each E of BENCH_LPI_CHURN_EVENTS
#                    ("256 1024" / "256 1024"): 2 x E cached translations
#                    that each DISCARD flushes on stock, and again with -k
#                    (the control: INV+SYNC in place of each remap, nothing
#                    invalidated) when the binary has it; BENCH_LPI_WARM_ARGS
#                    ("-v 2 -d 2 -i 60" / -i 30) with the largest E: the same
#                    translations in stress mode, nothing remapped,
#                    BENCH_LPI_MISS_ARGS ("-m -v 1") run with -d D -e E for each D
#                    of BENCH_LPI_MISS_DEVICES ("1 1024"), E = ceil(16 / D) events
#                    per device (16 timed targets per round whatever D),
#                    BENCH_LPI_TIMEOUT (300)
#   exit_cost:       BENCH_EXIT_VMS ("1 2 4") VMs of one vCPU at once,
#                    BENCH_EXIT_SECONDS (5 / 3) per run of vmid_isolation -i 1
#   its:             BENCH_ITS_MEM_ARGS ("-m -d 8192" / "-m -d 2048 -s 512"): vgic_its_mem,
#                    memory per mapped event and whole-ITS walk times;
#                    BENCH_ITS_RESTORE_DEVICES ("256 512 1024 2048" / "256 1024")
#                    devices of 16 EventID bits restored by vgic_its_save_restore
#                    -s, and BENCH_ITS_RESTORE_BITS ("8 12") EventID bits at
#                    BENCH_ITS_RESTORE_BITS_DEVICES (2048 / 1024) devices, on
#                    both kernels (stock + fix takes ~40 s per 1024 devices);
#                    BENCH_ITS_RESTORE_LARGE ("8192 32768" / "8192") devices on
#                    the patched kernel only (scenario its_large);
#                    BENCH_ITS_TIMEOUT (1200 / 600, < BENCH_TIMEOUT) seconds per selftest run
#                    (stock + fix's vgic_its_mem -m takes 5-13 minutes)
#   APPEND_EXTRA, QEMU_SMP, QEMU_MEM, QEMU_CPU: as for boot.sh, for every boot
stage=bench
. "$(dirname "$0")/lib.sh"
need_cmd git python3 gnuplot

# What the user set, for the reproducer line (before defaults are filled).
user_vars=$(compgen -e | grep -E '^BENCH_[A-Z0-9_]+$' | while IFS= read -r v; do
	printf '%s ' "$(quote_cmd "$v=${!v}")"
done || true)

bool() {
	case ${!1} in 0 | 1) ;; *) die "$E_USAGE" "$1='${!1}' must be 0 or 1" ;; esac
}
# uint VAR MIN: VAR must be an integer >= MIN
uint() {
	if ! [[ ${!1} =~ ^[0-9]+$ ]] || [ "${!1}" -lt "$2" ]; then
		die "$E_USAGE" "$1='${!1}' is not an integer >= $2"
	fi
}
# dflt VAR FULL QUICK: default by mode, unless set
dflt() {
	if [ -z "${!1+x}" ]; then
		if [ "$BENCH_QUICK" = 1 ]; then printf -v "$1" '%s' "$3"; else printf -v "$1" '%s' "$2"; fi
	fi
	export "${1?}"
}

BENCH_QUICK=${BENCH_QUICK:-0}
bool BENCH_QUICK
dflt BENCH_PAIRS 3 1
dflt BENCH_REBUILD 1 1
dflt BENCH_COST 1 1
dflt BENCH_VMID_BITS 3 3
all_scenarios="hackbench_l1 nested_rollover lpi exit_cost its"
dflt BENCH_SCENARIOS "$all_scenarios" "$all_scenarios"
dflt BENCH_EXIT_VMS "1 2 4" "1 2 4"
dflt BENCH_EXIT_SECONDS 5 3
dflt BENCH_CONFIGS "base kvm test kunit bench" "base kvm test kunit bench"
dflt BENCH_TIMEOUT "${TIMEOUT:-1800}" "${TIMEOUT:-900}"
dflt BENCH_HB_L1_GROUPS 10 4
dflt BENCH_HB_L1_LOOPS 40 40
dflt BENCH_HB_L1_RUNS 3 2
dflt BENCH_L2_GUESTS 8 4
dflt BENCH_L2_SMP 2 2
dflt BENCH_L2_MEM 256 256
dflt BENCH_L2_RUNS 5 2
dflt BENCH_L2_HACKBENCH_ARGS "-s 512 -l 20 -g 2 -f 5 -P" "-s 512 -l 20 -g 2 -f 5 -P"
dflt BENCH_L2_TIMEOUT 900 600
dflt BENCH_LPI_CONFIGS \
	"-v 1 -d 1 -e 1 -i 200000;-v 2 -d 2 -e 16 -i 8000;-v 2 -d 2 -e 17 -i 8000;-v 2 -d 4 -e 1 -i 60000;-v 1 -d 1 -e 17 -i 12000" \
	"-v 1 -d 1 -e 1 -i 100000;-v 2 -d 2 -e 16 -i 4000;-v 2 -d 2 -e 17 -i 4000;-v 2 -d 4 -e 1 -i 30000;-v 1 -d 1 -e 17 -i 6000"
dflt BENCH_LPI_CHURN_ARGS "-c -v 2 -d 2 -i 2000 -r 200 -w 1" "-c -v 2 -d 2 -i 1000 -r 200 -w 1"
dflt BENCH_LPI_CHURN_EVENTS "256 1024" "256 1024"
dflt BENCH_LPI_WARM_ARGS "-v 2 -d 2 -i 60" "-v 2 -d 2 -i 30"
dflt BENCH_LPI_MISS_ARGS "-m -v 1" "-m -v 1"
dflt BENCH_LPI_MISS_DEVICES "1 1024" "1 1024"
dflt BENCH_LPI_TIMEOUT 300 300
dflt BENCH_ITS_MEM_ARGS "-m -d 8192" "-m -d 2048 -s 512"
dflt BENCH_ITS_RESTORE_DEVICES "256 512 1024 2048" "256 1024"
dflt BENCH_ITS_RESTORE_BITS "8 12" "8 12"
dflt BENCH_ITS_RESTORE_BITS_DEVICES 2048 1024
dflt BENCH_ITS_RESTORE_LARGE "8192 32768" "8192"
dflt BENCH_ITS_TIMEOUT 1200 600
STOCKFIX_DEFAULT="KVM: arm64: vgic-its: Reschedule while scanning the ITS tables on restore;KVM: arm64: vgic-its: Walk only the ITEs of the collection at hand;KVM: arm64: vgic-its: Reschedule between ITS commands"
dflt BENCH_STOCKFIX "$STOCKFIX_DEFAULT" "$STOCKFIX_DEFAULT"
if [ -z "${BENCH_QEMU_EXTRA+x}" ]; then BENCH_QEMU_EXTRA=${QEMU_EXTRA:-}; fi
export BENCH_QEMU_EXTRA

bool BENCH_REBUILD
bool BENCH_COST
BENCH_LAVA=${BENCH_LAVA:-0}
case $BENCH_LAVA in 0 | pack | run) ;; *) die "$E_USAGE" "BENCH_LAVA='$BENCH_LAVA' must be 0, pack or run" ;; esac
BENCH_LAVA_OUT=$(realpath -m "${BENCH_LAVA_OUT:-$TOP/build/lava-bench}")
BENCH_LAVA_URL=${BENCH_LAVA_URL:-file://$BENCH_LAVA_OUT}
[[ $BENCH_LAVA_URL =~ ^(file|https?)://[^[:space:]]+$ ]] ||
	die "$E_USAGE" "BENCH_LAVA_URL='$BENCH_LAVA_URL' is not a file://, http:// or https:// URL"
if [ "$BENCH_LAVA" = run ]; then
	need_cmd lava-run
	. "$TOP/scripts/lava-lib.sh"
elif [ "$BENCH_LAVA" = pack ]; then
	. "$TOP/scripts/lava-lib.sh"
fi
uint BENCH_PAIRS 1
uint BENCH_TIMEOUT 1
uint BENCH_HB_L1_GROUPS 1
uint BENCH_HB_L1_LOOPS 1
uint BENCH_HB_L1_RUNS 1
uint BENCH_L2_GUESTS 1
uint BENCH_L2_SMP 1
uint BENCH_L2_MEM 64
uint BENCH_L2_RUNS 1
uint BENCH_L2_TIMEOUT 1
uint BENCH_LPI_TIMEOUT 1
uint BENCH_VMID_BITS 0
uint BENCH_EXIT_SECONDS 1
uint BENCH_ITS_TIMEOUT 1
uint BENCH_ITS_RESTORE_BITS_DEVICES 1
for v in $BENCH_ITS_RESTORE_DEVICES $BENCH_ITS_RESTORE_LARGE; do
	[[ $v =~ ^[1-9][0-9]*$ ]] && [ "$v" -le 65536 ] ||
		die "$E_USAGE" "BENCH_ITS_RESTORE_DEVICES / _LARGE: '$v' is not a number of devices (1..65536)"
done
for v in $BENCH_ITS_RESTORE_BITS; do
	[[ $v =~ ^[0-9]+$ ]] && [ "$v" -ge 1 ] && [ "$v" -le 16 ] ||
		die "$E_USAGE" "BENCH_ITS_RESTORE_BITS='$BENCH_ITS_RESTORE_BITS': '$v' is not a number of EventID bits (1..16)"
done
[[ $BENCH_ITS_MEM_ARGS =~ ^[-\ 0-9a-z]+$ ]] ||
	die "$E_USAGE" "BENCH_ITS_MEM_ARGS='$BENCH_ITS_MEM_ARGS': only options and numbers"
for v in $BENCH_EXIT_VMS; do
	[[ $v =~ ^[0-9]+$ ]] && [ "$v" -ge 1 ] && [ "$v" -le 64 ] ||
		die "$E_USAGE" "BENCH_EXIT_VMS='$BENCH_EXIT_VMS': '$v' is not a number of VMs (1..64)"
done
[ "$BENCH_VMID_BITS" = 0 ] || { [ "$BENCH_VMID_BITS" -ge 2 ] && [ "$BENCH_VMID_BITS" -le 15 ]; } ||
	die "$E_USAGE" "BENCH_VMID_BITS='$BENCH_VMID_BITS' must be 0 (no clamped boot) or 2..15"
for d in $BENCH_LPI_MISS_DEVICES; do
	[[ $d =~ ^[0-9]+$ ]] || die "$E_USAGE" "BENCH_LPI_MISS_DEVICES='$BENCH_LPI_MISS_DEVICES': '$d' is not a number"
done
for e in $BENCH_LPI_CHURN_EVENTS; do
	[[ $e =~ ^[1-9][0-9]*$ ]] ||
		die "$E_USAGE" "BENCH_LPI_CHURN_EVENTS='$BENCH_LPI_CHURN_EVENTS': '$e' is not a number of events per device"
done
[ -n "${BENCH_LPI_CHURN_EVENTS// /}" ] || die "$E_USAGE" "BENCH_LPI_CHURN_EVENTS is empty"
lpi_re='^[- 0-9a-zA-Z;]+$'
for v in BENCH_LPI_CHURN_ARGS BENCH_LPI_WARM_ARGS; do
	[[ ${!v} =~ $lpi_re && ${!v} != *";"* ]] || die "$E_USAGE" "$v='${!v}': only options and numbers"
	[[ " ${!v} " != *" -e "* ]] || die "$E_USAGE" "$v='${!v}': no -e (BENCH_LPI_CHURN_EVENTS gives it)"
done
[[ $BENCH_LPI_CONFIGS =~ $lpi_re ]] ||
	die "$E_USAGE" "BENCH_LPI_CONFIGS='$BENCH_LPI_CONFIGS': only options, numbers and ';' between configurations"
for s in $BENCH_SCENARIOS; do
	[[ " $all_scenarios " == *" $s "* ]] ||
		die "$E_USAGE" "BENCH_SCENARIOS: unknown scenario '$s' (have: $all_scenarios)"
done
[ -n "${BENCH_SCENARIOS// /}" ] || die "$E_USAGE" "BENCH_SCENARIOS is empty"
# one space between names, each once, in the order given
BENCH_SCENARIOS=$(for s in $BENCH_SCENARIOS; do echo "$s"; done | awk '!seen[$0]++' | xargs)
[ -n "${BENCH_ITS_RESTORE_DEVICES// /}${BENCH_ITS_RESTORE_BITS// /}" ] ||
	die "$E_USAGE" "BENCH_ITS_RESTORE_DEVICES and BENCH_ITS_RESTORE_BITS are both empty"
[ "$BENCH_ITS_TIMEOUT" -lt "$BENCH_TIMEOUT" ] ||
	die "$E_USAGE" "BENCH_ITS_TIMEOUT=$BENCH_ITS_TIMEOUT must be less than BENCH_TIMEOUT=$BENCH_TIMEOUT (one selftest run within one boot)"
for c in $BENCH_CONFIGS; do
	[ -f "$TOP/configs/$c.config" ] || die "$E_USAGE" "BENCH_CONFIGS: no fragment configs/$c.config"
done

TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
STOCK_TREE=$TOP/build/stock-tree
STOCK_O=$TOP/build/kernel-stock
PATCHED_TREE=$TREE
PATCHED_O=$TOP/build/kernel-bench
patched_audit=fail
BENCH_PATCHED_REV=${BENCH_PATCHED_REV:-HEAD}
KSFT_OUT=$(realpath -m "${KSFT_OUT:-$TOP/build/selftests}")
export KSFT_OUT
[ -e "$TREE/.git" ] || die "$E_USAGE" "no kernel tree at $TREE: run 'make apply' first"
git -C "$TREE" rev-parse -q --verify 'stock^{commit}' >/dev/null ||
	die "$E_USAGE" "no tag 'stock' in $TREE: run 'make apply' first"
patched_rev=$(git -C "$TREE" rev-parse -q --verify "$BENCH_PATCHED_REV^{commit}") ||
	die "$E_USAGE" "BENCH_PATCHED_REV='$BENCH_PATCHED_REV' is not a revision of $TREE"
git -C "$TREE" merge-base --is-ancestor stock "$patched_rev" ||
	die "$E_USAGE" "BENCH_PATCHED_REV='$BENCH_PATCHED_REV' does not contain the stock tag"
BENCH_STOCK_REV=${BENCH_STOCK_REV:-stock}
base_rev=$(git -C "$TREE" rev-parse -q --verify "$BENCH_STOCK_REV^{commit}") ||
	die "$E_USAGE" "BENCH_STOCK_REV='$BENCH_STOCK_REV' is not a revision of $TREE"
git -C "$TREE" merge-base --is-ancestor stock "$base_rev" ||
	die "$E_USAGE" "BENCH_STOCK_REV='$BENCH_STOCK_REV' does not contain the stock tag"
{ git -C "$TREE" merge-base --is-ancestor "$base_rev" "$patched_rev" && [ "$base_rev" != "$patched_rev" ]; } ||
	die "$E_USAGE" "BENCH_STOCK_REV='$BENCH_STOCK_REV' is not an ancestor of BENCH_PATCHED_REV='$BENCH_PATCHED_REV'"
if [ "$base_rev" != "$(git -C "$TREE" rev-parse 'stock^{commit}')" ]; then
	STOCK_TREE=$TOP/build/bench-base-tree
	STOCK_O=$TOP/build/kernel-bench-base
	if [ "$BENCH_VMID_BITS" != 0 ] && [[ " $BENCH_SCENARIOS " == *" nested_rollover "* ]]; then
		die "$E_USAGE" "BENCH_STOCK_REV='$BENCH_STOCK_REV' is not stock: set BENCH_VMID_BITS=0"
	fi
fi
if [ "$patched_rev" != "$(git -C "$TREE" rev-parse HEAD)" ]; then
	PATCHED_TREE=$TOP/build/bench-rev-tree
	PATCHED_O=$TOP/build/kernel-bench-rev
	patched_audit=skip
	if [ "$BENCH_VMID_BITS" != 0 ] && [[ " $BENCH_SCENARIOS " == *" nested_rollover "* ]]; then
		die "$E_USAGE" "BENCH_PATCHED_REV='$BENCH_PATCHED_REV' is not HEAD: set BENCH_VMID_BITS=0 (the clamped boot needs the whole series)"
	fi
fi
its=0
[[ " $BENCH_SCENARIOS " != *" its "* ]] || its=1
# the scenarios of the plain stock boot: "its" runs on stock + BENCH_STOCKFIX
stock_scen=$(for s in $BENCH_SCENARIOS; do [ "$s" = its ] || echo "$s"; done | xargs | tr ' ' ',')
# stockfix_revs: the commits of BENCH_STOCKFIX's ';'-separated subjects,
# in the series' order
stockfix_revs=
if [ "$its" = 1 ]; then
	IFS=';' read -r -a fix_subjects <<<"$BENCH_STOCKFIX"
	[ "${#fix_subjects[@]}" -gt 0 ] || die "$E_USAGE" "BENCH_STOCKFIX is empty (the its scenario needs it: leave its out of BENCH_SCENARIOS)"
	for subj in "${fix_subjects[@]}"; do
		rev=$(git -C "$TREE" log --format='%H %s' "stock..$patched_rev" |
			awk -v s="$subj" 'substr($0, 42) == s { print $1 }' | tail -n 1)
		[ -n "$rev" ] ||
			die "$E_USAGE" "BENCH_STOCKFIX: no commit with the subject '$subj' in stock..$BENCH_PATCHED_REV (the its scenario needs it: leave its out of BENCH_SCENARIOS)"
		stockfix_revs="$stockfix_revs $rev"
	done
	# shellcheck disable=SC2086
	# (none when BENCH_STOCK_REV has them all)
	stockfix_revs=$(git -C "$TREE" rev-list --reverse "$base_rev..$patched_rev" |
		{ grep -F -x -f <(printf '%s\n' $stockfix_revs) || true; } | xargs)
fi

RESULTS_DIR=${RESULTS_DIR:-$TOP/results}
ts=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=${RESULTS:-$RESULTS_DIR/$ts}
mkdir -p "$RESULTS"
ln -sfn "$(basename "$RESULTS")" "$RESULTS_DIR/latest"
exec > >(tee -a "$RESULTS/bench.log") 2>&1
info "results in $RESULTS"
scen_csv=$(echo "$BENCH_SCENARIOS" | xargs | tr ' ' ',')
clamped=0
if [ "$BENCH_VMID_BITS" != 0 ] && [[ " $BENCH_SCENARIOS " == *" nested_rollover "* ]]; then
	clamped=1
fi
info "plan: $BENCH_PAIRS pair(s) $([ -n "$stock_scen" ] && echo stock,)$([ $its = 1 ] && echo "stock+fix (its only),")patched$([ $clamped = 1 ] && echo ",patched kvm-arm.vmid_bits=$BENCH_VMID_BITS (nested only)"); scenarios: $BENCH_SCENARIOS; quick=$BENCH_QUICK"

first_rc=0
fail() { # fail RC MESSAGE: remember the first failure, go on
	warn "$2"
	[ "$first_rc" != 0 ] || first_rc=$1
}

# ---- prerequisites: guest userland and the selftest binary (cheap, once)
GUEST_ROOTFS=${GUEST_ROOTFS:-$CACHE_DIR/guest/rootfs}
if [ ! -x "$GUEST_ROOTFS/usr/bin/hackbench" ]; then
	info "no guest userland yet: running guest-rootfs"
	"$TOP/scripts/guest-rootfs.sh" || die "$E_FAIL" "guest-rootfs failed"
fi
need_bins=
for t in vgic_lpi_stress vmid_isolation vgic_its_mem vgic_its_save_restore vgic_its_collection_walk; do
	[ -x "$KSFT_OUT/kvm/aarch64/$t" ] || need_bins="$need_bins $t"
done
if [ -n "$need_bins" ]; then
	info "no selftests yet: running selftests"
	TREE=$TREE "$TOP/scripts/selftests.sh" || die "$E_FAIL" "selftests failed"
fi

# ---- 1. kernels
ensure_worktree "$TREE" "$STOCK_TREE" "$base_rev"
[ "$PATCHED_TREE" = "$TREE" ] || ensure_worktree "$TREE" "$PATCHED_TREE" "$patched_rev"

frags=$(for c in $BENCH_CONFIGS; do cat "$TOP/configs/$c.config"; done)
build_kernel() { # build_kernel KIND TREE O [AUDIT_MISSING]
	local kind=$1 tree=$2 o=$3 audit=${4:-fail} img=$3/arch/arm64/boot/Image
	if [ "$BENCH_REBUILD" = 0 ] && [ -f "$img" ]; then
		info "$kind kernel: BENCH_REBUILD=0 and $img exists: not rebuilt"
		if [ "$(cat "$o/.fragments.config" 2>/dev/null)" != "$frags" ]; then
			warn "$kind kernel: $o was not configured from BENCH_CONFIGS='$BENCH_CONFIGS' (differs from $o/.fragments.config); the comparison may be unfair"
		fi
		return 0
	fi
	info "$kind kernel: $(git -C "$tree" log -1 --format='%h %s')"
	printf '$ TREE=%s O=%s CONFIGS="%s" AUDIT_MISSING=%s scripts/build.sh\n' "$tree" "$o" "$BENCH_CONFIGS" "$audit"
	TREE=$tree O=$o CONFIGS=$BENCH_CONFIGS AUDIT_MISSING=$audit "$TOP/scripts/build.sh" ||
		die "$E_FAIL" "$kind kernel build failed (log: $o/build.log)"
}
build_kernel stock "$STOCK_TREE" "$STOCK_O" skip
build_kernel patched "$PATCHED_TREE" "$PATCHED_O" "$patched_audit"
STOCK_IMAGE=$STOCK_O/arch/arm64/boot/Image
PATCHED_IMAGE=$PATCHED_O/arch/arm64/boot/Image
STOCKFIX_TREE=$TOP/build/stockfix-tree
STOCKFIX_O=$TOP/build/kernel-stockfix
STOCKFIX_IMAGE=$STOCKFIX_O/arch/arm64/boot/Image
if [ "$its" = 1 ] && [ -z "$stockfix_revs" ]; then
	# BENCH_STOCK_REV has every BENCH_STOCKFIX commit: it is its own
	# stock + fix
	STOCKFIX_TREE=$STOCK_TREE STOCKFIX_O=$STOCK_O STOCKFIX_IMAGE=$STOCK_IMAGE
	info "stock+fix kernel: BENCH_STOCK_REV has the fix: the stock kernel"
elif [ "$its" = 1 ]; then
	# stock + BENCH_STOCKFIX alone, cherry-picked (the commit's identity
	# and date are kept, so the worktree's HEAD is the same every run).
	# A worktree that already is stock + that change is left as it is,
	# so that nothing is rebuilt.
	stock_rev=$base_rev
	pids_of() { for _r in "$@"; do git -C "$TREE" show "$_r" | git patch-id --stable | cut -d' ' -f1; done | xargs; }
	nfix=$(echo "$stockfix_revs" | wc -w)
	# shellcheck disable=SC2046,SC2086
	if [ -e "$STOCKFIX_TREE/.git" ] && git -C "$STOCKFIX_TREE" rev-parse -q --git-dir >/dev/null 2>&1 &&
		[ "$(git -C "$STOCKFIX_TREE" rev-parse -q --verify "HEAD~$nfix" 2>/dev/null)" = "$stock_rev" ] &&
		[ -z "$(git -C "$STOCKFIX_TREE" status --porcelain --untracked-files=no)" ] &&
		[ "$(pids_of $(git -C "$STOCKFIX_TREE" rev-list --reverse "HEAD~$nfix..HEAD"))" = "$(pids_of $stockfix_revs)" ]; then
		info "stock+fix worktree: already stock + $(git -C "$TREE" log --no-walk --format=%h $stockfix_revs | xargs)"
	else
		ensure_worktree "$TREE" "$STOCKFIX_TREE" "$stock_rev"
		for rev in $stockfix_revs; do
			GIT_COMMITTER_NAME=$(git -C "$TREE" log -1 --format=%an "$rev") \
				GIT_COMMITTER_EMAIL=$(git -C "$TREE" log -1 --format=%ae "$rev") \
				GIT_COMMITTER_DATE=$(git -C "$TREE" log -1 --format=%ad "$rev") \
				git -C "$STOCKFIX_TREE" cherry-pick "$rev" >/dev/null ||
				die "$E_FAIL" "BENCH_STOCKFIX: $rev does not apply on stock with the fixes before it (git -C $STOCKFIX_TREE cherry-pick --abort)"
		done
	fi
	build_kernel stock+fix "$STOCKFIX_TREE" "$STOCKFIX_O" skip
fi

# ---- settings for the report
{
	echo "command=${user_vars}make bench"
	for v in $(compgen -v | grep -E '^BENCH_[A-Z0-9_]+$'); do echo "$v=${!v}"; done
	echo "stock_commit=$(git -C "$STOCK_TREE" rev-parse HEAD)"
	echo "stock_describe=$(git -C "$TREE" log -1 --format='%h %s' "$base_rev")"
	echo "stock_patches=$(git -C "$TREE" rev-list --count "stock..$base_rev")"
	echo "patched_commit=$patched_rev"
	echo "patched_describe=$(git -C "$TREE" log -1 --format='%h %s' "$patched_rev")"
	echo "patched_patches=$(git -C "$TREE" rev-list --count "stock..$patched_rev")"
	echo "stock_image=$STOCK_IMAGE"
	echo "patched_image=$PATCHED_IMAGE"
	echo "stock_image_sha256=$(sha256sum "$STOCK_IMAGE" | cut -d' ' -f1)"
	if [ "$its" = 1 ]; then
		echo "stockfix_commit=$stockfix_revs"
		echo "stockfix_subject=$BENCH_STOCKFIX"
		echo "stockfix_image=$STOCKFIX_IMAGE"
		echo "stockfix_image_sha256=$(sha256sum "$STOCKFIX_IMAGE" | cut -d' ' -f1)"
		echo "build_stockfix=TREE=$STOCKFIX_TREE O=$STOCKFIX_O CONFIGS=\"$BENCH_CONFIGS\" AUDIT_MISSING=skip scripts/build.sh"
	fi
	echo "patched_image_sha256=$(sha256sum "$PATCHED_IMAGE" | cut -d' ' -f1)"
	echo "build_stock=TREE=$STOCK_TREE O=$STOCK_O CONFIGS=\"$BENCH_CONFIGS\" AUDIT_MISSING=skip scripts/build.sh"
	echo "build_patched=TREE=$PATCHED_TREE O=$PATCHED_O CONFIGS=\"$BENCH_CONFIGS\" AUDIT_MISSING=$patched_audit scripts/build.sh"
	echo "host_cpus=$(nproc)"
	echo "host_mem_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
	echo "host_cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "qemu=$(${QEMU:-qemu-system-aarch64} --version | head -n1)"
	echo "qemu_smp=${QEMU_SMP:-2}"
	echo "qemu_mem=${QEMU_MEM:-4G}"
	echo "append_extra=${APPEND_EXTRA:-}"
	echo "clamped_boot=$clamped"
	echo "scenarios_csv=$scen_csv"
} >"$RESULTS/bench.env"

# ---- 2. host-side instruction counts (deterministic)
if [ "$BENCH_COST" = 1 ]; then
	info "cost.sh: callgrind instruction counts, stock vmid.c vs library (-> bench-cost.txt)"
	printf '$ KSRC=%s selftests/harness/cost.sh\n' "$TREE"
	if KSRC=$TREE "$TOP/selftests/harness/cost.sh" >"$RESULTS/bench-cost.txt" 2>&1; then
		grep '^# callgrind' "$RESULTS/bench-cost.txt" || true
	else
		tail -n 20 "$RESULTS/bench-cost.txt" >&2
		fail "$E_FAIL" "cost.sh failed (output: $RESULTS/bench-cost.txt)"
	fi
	info "cost-sweep.sh: rollover and fast-path instructions against NCPU, VMID and ASID (-> bench-cost-sweep.{txt,tsv,svg})"
	printf '$ KSRC=%s selftests/harness/cost-sweep.sh --tsv %s --svg %s\n' "$TREE" \
		"$RESULTS/bench-cost-sweep.tsv" "$RESULTS/bench-cost-sweep.svg"
	if KSRC=$TREE "$TOP/selftests/harness/cost-sweep.sh" --tsv "$RESULTS/bench-cost-sweep.tsv" \
		--svg "$RESULTS/bench-cost-sweep.svg" >"$RESULTS/bench-cost-sweep.txt" 2>&1; then
		grep -E '^(# fit .* rollover_ir|GOAL)' "$RESULTS/bench-cost-sweep.txt" || true
	else
		tail -n 20 "$RESULTS/bench-cost-sweep.txt" >&2
		fail "$E_FAIL" "cost-sweep.sh failed (output: $RESULTS/bench-cost-sweep.txt)"
	fi
fi

# ---- 3. one initramfs per kernel
mkinitrd() { # mkinitrd KIND IMAGE
	local out=$TOP/build/initramfs/bench-$1.cpio.gz
	printf '$ IMAGE=%s STAGES=bench OUT=%s L2_GUESTS=%s L2_SMP=%s L2_MEM=%s L2_RUNS=%s L2_TIMEOUT=%s HACKBENCH_ARGS=%s BENCH_*=... scripts/initramfs.sh\n' \
		"$2" "$out" "$BENCH_L2_GUESTS" "$BENCH_L2_SMP" "$BENCH_L2_MEM" "$BENCH_L2_RUNS" "$BENCH_L2_TIMEOUT" "$(quote_cmd "$BENCH_L2_HACKBENCH_ARGS")"
	IMAGE=$2 STAGES=bench OUT=$out GUEST_ROOTFS=$GUEST_ROOTFS \
		L2_GUESTS=$BENCH_L2_GUESTS L2_SMP=$BENCH_L2_SMP L2_MEM=$BENCH_L2_MEM L2_RUNS=$BENCH_L2_RUNS \
		L2_TIMEOUT=$BENCH_L2_TIMEOUT HACKBENCH_ARGS=$BENCH_L2_HACKBENCH_ARGS \
		"$TOP/scripts/initramfs.sh" || die "$E_FAIL" "initramfs for the $1 kernel failed"
}
mkinitrd stock "$STOCK_IMAGE"
mkinitrd patched "$PATCHED_IMAGE"

# ---- 4. boots, alternating
# BENCH_LAVA: the pack, with one job per boot of the plan, in its order
# (boots.tsv), for a lab (pack) or for lava-run here (run).
if [ "$BENCH_LAVA" != 0 ]; then
	P=$BENCH_LAVA_OUT
	rm -rf "$P"
	mkdir -p "$P"/{stock,patched,devices,jobs,templates}
	cp "$STOCK_IMAGE" "$P/stock/Image"
	cp "$PATCHED_IMAGE" "$P/patched/Image"
	if [ "$its" = 1 ]; then mkdir -p "$P/stock-fix" && cp "$STOCKFIX_IMAGE" "$P/stock-fix/Image"; fi
	cp "$TOP/build/initramfs/bench-stock.cpio.gz" "$TOP/build/initramfs/bench-patched.cpio.gz" "$P/"
	cp "$RESULTS/bench.env" "$P/"
	for f in "$RESULTS"/bench-cost*; do [ ! -f "$f" ] || cp "$f" "$P/"; done
	lava_smp=${QEMU_SMP:-2}
	lava_device "$P/devices/qemu-bench.yaml" "make bench's boots: the machine of scripts/boot.sh" \
		"${QEMU_MACHINE:-virt,virtualization=on,gic-version=3,its=on}" "$lava_smp" "${QEMU_MEM:-4G}" "$BENCH_QEMU_EXTRA"
	lava_min=$(((BENCH_TIMEOUT + 59) / 60))
	printf 'job\tkernel\tinitramfs\tlog\n' >"$P/boots.tsv"
	rm -rf "$TOP/build/lava-bench-run"
fi
lava_id=0
printf 'kind\tvariant\tpair\trc\tseconds\tloadavg_start\tloadavg_end\n' >"$RESULTS/bench-boots.tsv"
boot_one() { # boot_one KIND VARIANT PAIR SCENARIOS [KERNEL-PARAMS]
	local kind=$1 variant=$2 pair=$3 scen=$4 params=${5:-} name log rc t0 l0 img append
	name=$kind${variant:+-$variant}
	log=$RESULTS/bench-$name-$pair.log
	img=$STOCK_IMAGE
	[ "$kind" = stock ] || img=$PATCHED_IMAGE
	# stock + BENCH_STOCKFIX, with the stock initramfs (its L2 kernel is
	# stock's; the "its" scenario boots no L2 guest)
	[ "$name" != stock-fix ] || img=$STOCKFIX_IMAGE
	append="kunit.enable=0 workbench.bench=$scen${params:+ $params}${APPEND_EXTRA:+ $APPEND_EXTRA}"
	if [ "$BENCH_LAVA" != 0 ]; then
		local dir=$name
		[ "$name" != patched-vmid$BENCH_VMID_BITS ] || dir=patched
		lava_qemu_job "$P/jobs/qemu-bench-$name-$pair.yaml" "bench $name, pair $pair (qemu)" \
			"$BENCH_LAVA_URL/$dir/Image" "$BENCH_LAVA_URL/bench-$kind.cpio.gz" \
			"$(lava_cmdline "$lava_smp" "$append")" "$lava_min"
		[ -f "$P/templates/board-uboot-bench-$name.yaml" ] ||
			lava_board_templates "$P/templates" "bench-$name" "$append" "$lava_min"
		printf 'jobs/qemu-bench-%s-%s.yaml\t%s/Image\tbench-%s.cpio.gz\t%s-%s\n' \
			"$name" "$pair" "$dir" "$kind" "$name" "$pair" >>"$P/boots.tsv"
		[ "$BENCH_LAVA" = run ] || return 0
	fi
	info "pair $pair/$BENCH_PAIRS: $name kernel, scenarios $scen"
	l0=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s)
	set +e
	if [ "$BENCH_LAVA" = run ]; then
		lava_id=$((lava_id + 1))
		lava_run "$lava_id" "$TOP/build/lava-bench-run" "$P/devices/qemu-bench.yaml" \
			"$P/jobs/qemu-bench-$name-$pair.yaml" "$RESULTS/lava-bench-$name-$pair.log"
		python3 "$TOP/scripts/lava-collect.py" --bench --console-only "$RESULTS" "$P" \
			"$name-$pair=$RESULTS/lava-bench-$name-$pair.log"
	else
		IMAGE=$img INITRD=$TOP/build/initramfs/bench-$kind.cpio.gz CONSOLE_LOG=$log \
			TIMEOUT=$BENCH_TIMEOUT STALL=0 QEMU_EXTRA=$BENCH_QEMU_EXTRA APPEND_EXTRA="$append" \
			"$TOP/scripts/boot.sh"
	fi
	rc=$?
	set -e
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "${variant:--}" "$pair" "$rc" \
		"$(($(date +%s) - t0))" "$l0" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RESULTS/bench-boots.tsv"
	[ "$rc" = 0 ] || fail "$rc" "$name boot of pair $pair: rc=$rc (console $log)"
}
for ((p = 1; p <= BENCH_PAIRS; p++)); do
	[ -z "$stock_scen" ] || boot_one stock "" "$p" "$stock_scen"
	[ "$its" = 0 ] || boot_one stock fix "$p" its
	boot_one patched "" "$p" "$scen_csv$([ "$its" = 0 ] || [ -z "${BENCH_ITS_RESTORE_LARGE// /}" ] || echo ,its_large)"
	if [ "$clamped" = 1 ]; then
		boot_one patched "vmid$BENCH_VMID_BITS" "$p" nested_rollover "kvm-arm.vmid_bits=$BENCH_VMID_BITS"
	fi
done
if [ "$BENCH_LAVA" = pack ]; then
	info "pack in $P: $(($(wc -l <"$P/boots.tsv") - 1)) qemu jobs (submit them in the order of boots.tsv), $(ls "$P/templates" | wc -l) board templates, $(du -sh "$P" | cut -f1)"
	info "collect a lab's logs with: scripts/lava-collect.py --bench <results dir> $P <name-pair>=<log> ... (Documentation/lava.md)"
	rm -f "$RESULTS/bench-boots.tsv"
	info "PASS in $(elapsed)"
	exit 0
fi

# ---- 5. report
set +e
# Documentation/benchmarks.md keeps the latest run of the whole series
# with every scenario; a run of part of the series (BENCH_PATCHED_REV,
# BENCH_STOCK_REV) or
# of some scenarios (BENCH_SCENARIOS), or a run in which a boot failed,
# only goes to its results.
doc_arg=()
[ "$PATCHED_TREE" = "$TREE" ] || doc_arg=(--no-doc)
[ "$STOCK_O" = "$TOP/build/kernel-stock" ] || doc_arg=(--no-doc)
[ "$first_rc" = 0 ] || doc_arg=(--no-doc)
for s in $all_scenarios; do
	[[ " $BENCH_SCENARIOS " == *" $s "* ]] || doc_arg=(--no-doc)
done
python3 "$TOP/scripts/bench-report.py" "${doc_arg[@]}" "$RESULTS"
rrc=$?
set -e
[ "$rrc" = 0 ] || fail "$rrc" "bench-report.py failed (rc=$rrc)"
if [ "$first_rc" != 0 ]; then
	die "$first_rc" "finished with failures in $(elapsed) (first rc=$first_rc); results in $RESULTS"
fi
info "PASS in $(elapsed); results in $RESULTS"
