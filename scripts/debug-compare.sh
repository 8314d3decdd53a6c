#!/usr/bin/env bash
# "make debug-compare" (issue 6): splats of stock 6.12 vs the series under a
# debug profile, same tests, one run.
#
#  1. builds, one after the other, the stock tree (tag "stock" of
#     build/linux, worktree build/stock-tree) into build/kernel-stock-<profile>
#     with "base kvm test kunit <profile>" (AUDIT_MISSING=skip), and the
#     patched tree into build/kernel-<profile> with the same fragments plus
#     "series" (as `make build PROFILE=<profile>` does); ccache and an
#     existing build make either step incremental;
#  2. boots each kernel (its own nested guests run the same kernel) with the
#     same main-boot plan: KUnit, the KVM selftests, nested guests, and with
#     the debug profile the kmemleak scan;
#  3. counts the splat lines of each console by kind and writes
#     $RESULTS/debug-compare.tsv and a table in $RESULTS/debug-compare.md.
#
# Test failures do not count here (stock fails the series' new tests by
# design: vgic_its_cache); each boot's own report is under
# $RESULTS/<stock|patched>/. Exit status: 2 if the patched kernel has any
# splat, 255/124 if a boot panicked or hung, 0 otherwise: stock's splats are
# reported, not judged. Not part of make check (two debug builds, ~21 min
# each cold, and two debug boots: 17 and 50 min measured on a busy host).
#
#   PROFILE (debug)  debug or kcsan
#   TESTS, KSELFTEST_<NAME>_ARGS, QEMU_SMP ...: as for make check
PROFILE=${PROFILE:-debug}
stage=debug-compare
. "$(dirname "$0")/lib.sh"
need_cmd git python3

[ "$PROFILE" != default ] || die $E_USAGE "PROFILE=default has no debug options: use PROFILE=debug or PROFILE=kcsan"
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
TREE=$STOCK_TREE O=$STOCK_O CONFIGS="base kvm test kunit $PROFILE" AUDIT_MISSING=skip \
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
	case $rc in 124 | 255) worst=$rc ;; esac
done

# ---- 3. splat counts by kind
python3 - "$RESULTS" "$PROFILE" "$TOP" <<'PY'
import os, re, sys
sys.path.insert(0, os.path.join(sys.argv[3], "scripts"))
from report import SPLAT, TS  # the same definition of a splat as make check

res, profile = sys.argv[1], sys.argv[2]
KINDS = [
    ("lockdep", r"Invalid wait context|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage"),
    ("KASAN", r"KASAN:"),
    ("KCSAN", r"KCSAN:"),
    ("kmemleak", r"kmemleak: .* new suspected"),
    ("UBSAN", r"UBSAN:"),
    ("refcount", r"refcount_t: "),
    ("WARNING", r"WARNING: CPU:"),
    ("ID alias", r"\b(?:asid|vmid): ID \d+ shared by two contexts"),
]
rows = {}
firsts = {}
for kind in ("stock", "patched"):
    path = os.path.join(res, kind, "console.log")
    lines = open(path, errors="replace").read().splitlines() if os.path.exists(path) else []
    splats = [TS.sub("", ln) for ln in lines if SPLAT.search(ln)]
    counts = {k: 0 for k, _ in KINDS}
    counts["other"] = 0
    for ln in splats:
        for k, rx in KINDS:
            if re.search(rx, ln):
                counts[k] += 1
                break
        else:
            counts["other"] += 1
    counts["total"] = len(splats)
    rows[kind] = counts
    firsts[kind] = splats[:5]
cols = [k for k, _ in KINDS] + ["other", "total"]
with open(os.path.join(res, "debug-compare.tsv"), "w") as f:
    f.write("kernel\t" + "\t".join(cols) + "\n")
    for kind in ("stock", "patched"):
        f.write(kind + "\t" + "\t".join(str(rows[kind][c]) for c in cols) + "\n")
with open(os.path.join(res, "debug-compare.md"), "w") as f:
    f.write("Splat lines in the console, profile %s, same plan for both kernels:\n\n" % profile)
    f.write("| kernel | " + " | ".join(cols) + " |\n|" + " --- |" * (len(cols) + 1) + "\n")
    for kind in ("stock", "patched"):
        f.write("| %s | " % kind + " | ".join(str(rows[kind][c]) for c in cols) + " |\n")
    for kind in ("stock", "patched"):
        if firsts[kind]:
            f.write("\nFirst %s splat lines:\n\n" % kind)
            for ln in firsts[kind]:
                f.write("    %s\n" % ln)
print(open(os.path.join(res, "debug-compare.md")).read())
PY

patched_splats=$(awk -F'\t' '$1 == "patched" { print $NF }' "$RESULTS/debug-compare.tsv")
[ "$worst" = 0 ] || die "$worst" "a boot panicked or hung (see $RESULTS/*.rc and run-*.log)"
[ "$patched_splats" = 0 ] || die $E_FAIL "the patched $PROFILE kernel has $patched_splats splat line(s): $RESULTS/debug-compare.md"
info "PASS: patched kernel splat-free under $PROFILE in $(elapsed)"
