#!/usr/bin/env bash
# "make check-bisect": build the kernel Image after every patch of the
# series, in a separate worktree and output directory, with the same
# config fragments (options that a later patch adds are skipped by the
# audit), and report the compiler warnings each patch adds; a patch that
# only touches tools/ gets the KVM selftests built instead. Slow: one
# incremental build per patch; not part of make check.
#   BISECT_TREE, BISECT_O  worktree and output (build/bisect-tree, build/bisect-out)
stage=check-bisect
. "$(dirname "$0")/lib.sh"
need_cmd git

TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
BISECT_O=$(realpath -m "${BISECT_O:-$TOP/build/bisect-out}")
# The worktree is checked out afresh, so Kbuild recompiles everything, and
# ccache only hits for the same source path and output directory pair:
# reuse one that has been built before (e.g. BISECT_TREE=build/mutant-tree
# BISECT_O=build/kernel-mutant after make kernel-mutants).
WT=$(realpath -m "${BISECT_TREE:-$TOP/build/bisect-tree}")
KSFT_O=$BISECT_O-selftests
[ -e "$TREE/.git" ] || die $E_USAGE "no tree at $TREE: run 'make apply' first"
mapfile -t commits < <(git -C "$TREE" rev-list --reverse stock..HEAD)
[ ${#commits[@]} -gt 0 ] || die $E_USAGE "no patches on top of stock in $TREE"

rm -rf "$WT"
git -C "$TREE" worktree prune
git -C "$TREE" worktree add -q --detach "$WT" stock
trap 'git -C "$TREE" worktree remove --force "$WT" >/dev/null 2>&1 || true' EXIT

rm -f "$BISECT_O/w.seen"
i=0
fail=0
# verdict ok|bad MESSAGE: one line per patch; "bad" counts as a failure.
verdict() {
	info "[$i/${#commits[@]}] $subj: $2"
	[ "$1" = ok ] || fail=$((fail + 1))
}
for c in stock "${commits[@]}"; do
	git -C "$WT" checkout -q "$c"
	subj=$(git -C "$WT" log -1 --format='%h %s')
	log=$BISECT_O/build-$i.log
	mkdir -p "$BISECT_O"
	if [ "$c" != stock ] && git -C "$WT" diff --quiet "$c~1" "$c" -- . ':!tools'; then
		# Only tools/ changed: the Image is the previous one; build what
		# the patch touches, the KVM selftests.
		if TREE=$WT KSFT_OUT=$KSFT_O "$TOP/scripts/selftests.sh" >"$log" 2>&1; then
			verdict ok "selftests only: kvm selftests build"
		else
			verdict bad "SELFTESTS BUILD FAILED (log: $log)"
		fi
	elif AUDIT_MISSING=skip TREE=$WT O=$BISECT_O "$TOP/scripts/build.sh" >"$log" 2>&1; then
		# Incremental builds only show warnings of recompiled files:
		# compare against every warning seen so far.
		grep -o '[^ ]*: warning:.*' "$BISECT_O/build.log" | sort -u >"$BISECT_O/w.now" || true
		new=$(comm -13 "$BISECT_O/w.seen" "$BISECT_O/w.now" 2>/dev/null || cat "$BISECT_O/w.now")
		cat "$BISECT_O/w.now" >>"$BISECT_O/w.seen"
		sort -u -o "$BISECT_O/w.seen" "$BISECT_O/w.seen"
		if [ "$c" != stock ] && [ -n "$new" ]; then
			verdict bad "builds, NEW warnings:"
			printf '%s\n' "$new" | sed 's/^/    /'
		else
			verdict ok "builds, no new warnings"
		fi
	else
		verdict bad "BUILD FAILED (log: $log)"
	fi
	i=$((i + 1))
done
[ "$fail" = 0 ] || die $E_FAIL "$fail patch(es) break the build or add warnings"
info "PASS: every patch builds without new warnings, in $(elapsed)"
