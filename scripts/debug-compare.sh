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

RESULTS_DIR=${RESULTS_DIR:-$TOP/results}
RESULTS=${RESULTS:-$RESULTS_DIR/$(date -u +%Y%m%dT%H%M%SZ)-debug-compare-$PROFILE}
mkdir -p "$RESULTS"
info "profile $PROFILE; results in $RESULTS"

# ---- 1. kernels, one build at a time
ensure_worktree "$TREE" "$STOCK_TREE" "$stock_rev"
info "stock $PROFILE kernel -> $STOCK_O"
TREE=$STOCK_TREE O=$STOCK_O CONFIGS="base kvm test kunit faults gicv4 $PROFILE_CONFIGS" AUDIT_MISSING=skip \
	"$TOP/scripts/build.sh" >"$RESULTS/build-stock.log" 2>&1 ||
	{ tail -n 20 "$RESULTS/build-stock.log" >&2; die $E_FAIL "stock $PROFILE kernel build failed (log: $RESULTS/build-stock.log)"; }
info "patched $PROFILE kernel -> $KERNEL_O"
TREE=$TREE "$TOP/scripts/build.sh" >"$RESULTS/build-patched.log" 2>&1 ||
	{ tail -n 20 "$RESULTS/build-patched.log" >&2; die $E_FAIL "patched $PROFILE kernel build failed (log: $RESULTS/build-patched.log)"; }
[ -x "$TOP/build/selftests/kvm/aarch64/vgic_its_cache" ] ||
	"$TOP/scripts/selftests.sh" || die $E_FAIL "selftests failed"

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
