#!/usr/bin/env bash
# "make debug-compare": stock 6.12 vs the series under one profile, same
# tests, one run: each test's result and the splats by kind.
#
#  1. builds, one after the other, the stock tree (tag "stock" of
#     build/linux, worktree build/stock-tree) into build/kernel-stock-<profile>
#     with "base kvm test kunit faults gicv4 [<profile>]" (AUDIT_MISSING=skip), and the
#     patched tree into build/kernel-<profile> with the same fragments plus
#     "series" (as `make build PROFILE=<profile>` does); ccache and an
#     existing build make either step incremental;
#  2. boots each kernel (its own nested guests run the same kernel) with the
#     same main-boot plan: KUnit, the KVM selftests, nested guests, and with
#     the debug profile the kmemleak scan;
#  3. puts each test's result of the two boots side by side, counts the
#     splat lines of each console by kind, KCSAN reports also by race site
#     (scripts/splat-compare.py), and writes $RESULTS/debug-compare.tsv and
#     the tables in $RESULTS/debug-compare.md.
#
# Each boot's own report is under $RESULTS/<stock|patched>/. Exit status:
# 2 if the patched kernel has any splat (PROFILE=kcsan: any splat but a
# KCSAN report, and KCSAN reports of a race site in KVM, vgic or ASID/VMID
# code that stock did not show; see scripts/splat-compare.py) or, with
# PROFILE=default, a failed test; 255/124 if the patched boot panicked or
# hung; 0 otherwise. Stock's failures, splats, panics and hangs are
# reported, not judged (stock fails the series' new tests by design, and
# its ITS restore can soft-lock). Not part of make check (debug:
# two builds, ~21 min each cold, and two boots, 17 and 50 min measured on
# a busy host; default, the ITS tests only: about 8 min warm).
#
#   PROFILE (debug)  default, debug or kcsan
#   COMPARE_STOCK_REV (stock), COMPARE_REV (HEAD)  revisions of build/linux
#                    to compare, e.g. a posting (part/<N>-<name>, or a
#                    branch of stock plus the postings it names) against
#                    the postings it applies on, so that a cover's figures
#                    are of the tree it describes. Other than the defaults,
#                    each is checked out as a worktree of its own
#                    (build/compare-base-tree, build/compare-rev-tree),
#                    built into build/kernel-compare-{base,rev}-<profile>,
#                    and both boots run the selftests of COMPARE_REV (built
#                    into build/selftests-compare-rev)
#   TESTS, STAGES, KSELFTEST_<NAME>_ARGS, QEMU_SMP ...: as for make check
PROFILE=${PROFILE:-debug}
stage=debug-compare
. "$(dirname "$0")/lib.sh"
need_cmd git python3

TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
[ -e "$TREE/.git" ] || die $E_USAGE "no kernel tree at $TREE: run 'make apply' first"
stock_rev=$(git -C "$TREE" rev-parse -q --verify 'stock^{commit}') ||
	die $E_USAGE "no tag 'stock' in $TREE: run 'make apply' first"
STOCK_TREE=$TOP/build/stock-tree
STOCK_O=$TOP/build/kernel-stock-$PROFILE
COMPARE_STOCK_REV=${COMPARE_STOCK_REV:-stock}
COMPARE_REV=${COMPARE_REV:-HEAD}
base_rev=$(git -C "$TREE" rev-parse -q --verify "$COMPARE_STOCK_REV^{commit}") ||
	die $E_USAGE "COMPARE_STOCK_REV='$COMPARE_STOCK_REV' is not a revision of $TREE"
rev=$(git -C "$TREE" rev-parse -q --verify "$COMPARE_REV^{commit}") ||
	die $E_USAGE "COMPARE_REV='$COMPARE_REV' is not a revision of $TREE"
for r in "$base_rev" "$rev"; do
	git -C "$TREE" merge-base --is-ancestor "$stock_rev" "$r" ||
		die $E_USAGE "COMPARE_STOCK_REV and COMPARE_REV must contain the stock tag ($r does not)"
done
[ "$base_rev" != "$rev" ] || die $E_USAGE "COMPARE_STOCK_REV and COMPARE_REV are the same commit"
patched_audit=fail
if [ "$base_rev" != "$stock_rev" ]; then
	STOCK_TREE=$TOP/build/compare-base-tree
	STOCK_O=$TOP/build/kernel-compare-base-$PROFILE
	stock_rev=$base_rev
fi
if [ "$rev" != "$(git -C "$TREE" rev-parse HEAD)" ]; then
	ensure_worktree "$TREE" "$TOP/build/compare-rev-tree" "$rev"
	TREE=$TOP/build/compare-rev-tree
	KERNEL_O=$TOP/build/kernel-compare-rev-$PROFILE
	KSFT_OUT=$TOP/build/selftests-compare-rev
	export KSFT_OUT
	patched_audit=skip
fi
KSFT_DIR=${KSFT_OUT:-$TOP/build/selftests}

RESULTS_DIR=${RESULTS_DIR:-$TOP/results}
RESULTS=${RESULTS:-$RESULTS_DIR/$(date -u +%Y%m%dT%H%M%SZ)-debug-compare-$PROFILE}
mkdir -p "$RESULTS"
info "profile $PROFILE; results in $RESULTS"
{
	echo "stock side: $(git -C "$TREE" log -1 --format='%h %s' "$stock_rev") ($COMPARE_STOCK_REV)"
	echo "patched side: $(git -C "$TREE" log -1 --format='%h %s' "$rev") ($COMPARE_REV)"
} >"$RESULTS/revs.txt"

# ---- 1. kernels, one build at a time
ensure_worktree "$TREE" "$STOCK_TREE" "$stock_rev"
info "stock $PROFILE kernel -> $STOCK_O"
TREE=$STOCK_TREE O=$STOCK_O CONFIGS="base kvm test kunit faults gicv4 $PROFILE_CONFIGS" AUDIT_MISSING=skip \
	"$TOP/scripts/build.sh" >"$RESULTS/build-stock.log" 2>&1 ||
	{ tail -n 20 "$RESULTS/build-stock.log" >&2; die $E_FAIL "stock $PROFILE kernel build failed (log: $RESULTS/build-stock.log)"; }
info "patched $PROFILE kernel ($(git -C "$TREE" log -1 --format='%h %s' HEAD)) -> $KERNEL_O"
TREE=$TREE O=$KERNEL_O AUDIT_MISSING=$patched_audit "$TOP/scripts/build.sh" >"$RESULTS/build-patched.log" 2>&1 ||
	{ tail -n 20 "$RESULTS/build-patched.log" >&2; die $E_FAIL "patched $PROFILE kernel build failed (log: $RESULTS/build-patched.log)"; }
GUEST_ROOTFS=${GUEST_ROOTFS:-$CACHE_DIR/guest/rootfs}
if [ ! -d "$GUEST_ROOTFS/bin" ]; then
	info "no guest userland yet: running guest-rootfs"
	"$TOP/scripts/guest-rootfs.sh" || die $E_FAIL "guest-rootfs failed"
fi
[ -x "$KSFT_DIR/kvm/aarch64/vgic_its_cache" ] ||
	TREE=$TREE "$TOP/scripts/selftests.sh" || die $E_FAIL "selftests failed"

# ---- 2. one boot each, the same plan
worst=0
for kind in stock patched; do
	img=$KERNEL_O/arch/arm64/boot/Image
	[ "$kind" = patched ] || img=$STOCK_O/arch/arm64/boot/Image
	info "booting the $kind $PROFILE kernel"
	set +e
	RESULTS=$RESULTS/$kind IMAGE=$img OUT=$TOP/build/initramfs/l1-compare.cpio.gz \
		INITRD=$TOP/build/initramfs/l1-compare.cpio.gz STAGES_HOST="initramfs boot" \
		"$TOP/scripts/run.sh" >"$RESULTS/run-$kind.log" 2>&1
	rc=$?
	set -e
	info "$kind: run.sh exit $rc ($(grep -m1 -o 'Result: .*' "$RESULTS/$kind/SUMMARY.md" 2>/dev/null || echo 'no report'))"
	echo "$rc" >"$RESULTS/$kind.rc"
	# Stock's panics and hangs are its own (6.12's ITS restore can trip the
	# soft-lockup detector): reported, its later tests "not run".
	case $kind:$rc in
	patched:124 | patched:255) worst=$rc ;;
	# a boot that could not run (no userland, a bad variable) compares
	# nothing: neither side's results mean anything then
	*:1) die $E_USAGE "the $kind boot could not run (run.sh exit 1): $(grep -m1 '^E: ' "$RESULTS/run-$kind.log" || echo "see $RESULTS/run-$kind.log")" ;;
	stock:124 | stock:255) warn "the stock boot ended early (exit $rc): its later tests did not run" ;;
	esac
done

# ---- 3. splat counts by kind (KCSAN: by race site too)
python3 "$TOP/scripts/splat-compare.py" "$RESULTS" "$PROFILE" ||
	die $E_FAIL "splat-compare.py failed on $RESULTS"
gate=$(cat "$RESULTS/debug-compare.gate")

[ "$worst" = 0 ] || die "$worst" "a boot panicked or hung (see $RESULTS/*.rc and run-*.log)"
[ "$gate" = 0 ] || die $E_FAIL "the patched $PROFILE kernel has $gate splat line(s) or failed test(s) that fail the comparison: $RESULTS/debug-compare.md"
info "PASS: patched $PROFILE kernel: no splat$([ "$PROFILE" != default ] || echo ", no failed test") in $(elapsed)"
