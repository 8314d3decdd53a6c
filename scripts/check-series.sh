#!/usr/bin/env bash
# Stage "check-series": the cheap checks a reviewer runs first.
#  - series and patches/ agree (no missing file, no unlisted patch);
#  - every patch has a body, Author and Signed-off-by of the project identity;
#  - a kernel patch (one that changes more than selftests) argues the kernel
#    change: its message does not name the workbench ("make check", "the
#    workbench"; saying that a figure comes from QEMU is allowed);
#  - commit citations are in checkpatch's GIT_COMMIT_ID form
#    (scripts/cite-check.py: checkpatch itself skips every id that does
#    not resolve, and no upstream id resolves in a tree made from a tarball);
#  - every section of series (a posted series) has its cover letter in
#    patches/covers/, whose text is at most 120 lines;
#  - checkpatch.pl --strict passes on every patch (SKIP, never "clean",
#    when the tree has no checkpatch; a failure with WORKBENCH_REQUIRE_TOOLS=1);
#  - README.md is at most 12 KiB;
#  - each posting applies with git am on stock plus exactly the postings
#    its cover letter names (scripts/check-postings.sh, when TREE has the
#    tag "stock");
#  - the series applies (done by scripts/apply.sh, run before this).
#   TREE=<dir> for scripts/checkpatch.pl (default build/linux)
#   VERDICT_CACHE=0  re-run checkpatch on every patch. Otherwise a patch
#     whose text, and the checkpatch inputs of TREE, are those of a patch
#     that passed before is not checked again (kept in $CACHE_DIR/verdicts/).
stage=check-series
. "$(dirname "$0")/lib.sh"

TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
SERIES=${SERIES:-$TOP/series}
PATCH_DIR=$(dirname "$SERIES")/patches
IDENT="arm64 KVM series <kvm-arm64-series@example.org>"
fail=0
bad() {
	printf 'E: check-series: %s\n' "$*" >&2
	fail=$((fail + 1))
}

[ -f "$SERIES" ] || die $E_USAGE "series file missing"
listed=$( (grep -v '^[[:space:]]*\(#\|$\)' "$SERIES" || true) | sed 's|^patches/||' | sort)
present=$( (cd "$PATCH_DIR" 2>/dev/null && ls -1 *.patch 2>/dev/null) | grep -v '^0000-cover-letter' | sort || true)
if [ "$listed" != "$present" ]; then
	bad "series and patches/ disagree: $(comm -3 <(echo "$listed") <(echo "$present") | tr -s ' \t\n' ' ')"
	echo "   regenerate with: make export" >&2
fi
sections=$(sed -n 's/^# == \([^:]*\):.*/\1/p' "$SERIES")
[ -z "$listed" ] || [ -n "$sections" ] || bad "series has no '# == <N>-<name>: <title>' section: make export writes them"
for sec in $sections; do
	cl=$PATCH_DIR/covers/0000-$sec.patch
	if [ ! -f "$cl" ]; then
		bad "patches/covers/0000-$sec.patch missing (make export writes it)"
		continue
	fi
	# The text: from the blank line after the headers to the shortlog.
	nl=$(awk 'NR>1 && /^$/ && !b {b=1; next} b && /^[A-Za-z0-9 ._-]+ \([0-9]+\):$/ {exit} b' "$cl" | wc -l)
	[ "$nl" -le 120 ] || bad "patches/covers/0000-$sec.patch: $nl lines of text, more than 120"
done
readme=$TOP/README.md
if [ -f "$readme" ] && [ "$(wc -c <"$readme")" -gt 12288 ]; then
	bad "README.md is $(wc -c <"$readme") bytes, more than 12 KiB: move reference material to Documentation/"
fi

# What a checkpatch + get_maintainer verdict depends on besides the patch:
# the tools and their data in TREE, this script (its --ignore list) and
# CHECKPATCH_FLAGS.
tool_key=
if [ -x "$TREE/scripts/checkpatch.pl" ]; then
	tool_key=$( (cd "$TREE" && cat scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch \
		scripts/get_maintainer.pl MAINTAINERS 2>/dev/null; cat "$TOP/scripts/check-series.sh"; echo "${CHECKPATCH_FLAGS:-}") |
		sha256sum | cut -c1-16)
fi
vdir=$CACHE_DIR/verdicts/checkpatch
ncached=0
n=0
for p in $listed; do
	f=$PATCH_DIR/$p
	[ -f "$f" ] || continue
	n=$((n + 1))
	grep -q "^From: $IDENT" "$f" || bad "$p: author is not '$IDENT'"
	grep -q "^Signed-off-by: $IDENT" "$f" || bad "$p: no Signed-off-by: $IDENT"
	body=$(awk '/^Subject:/{s=1;next} s&&/^---$/{exit} s' "$f" |
		grep -v '^\(Signed-off-by\|Cc\|Link\|Fixes\|Reviewed-by\):' | grep -c '[a-z]' || true)
	[ "$body" -ge 2 ] || bad "$p: no commit message body (say why)"
	# A kernel patch argues the kernel change, not the test set-up.
	if grep '^diff --git a/' "$f" | grep -qv '^diff --git a/tools/testing/selftests/'; then
		words=$(awk '/^Subject:/{s=1} s&&/^---$/{exit} s' "$f" |
			grep -o -E 'make check|[Ww]orkbench' | sort -u | tr '\n' ' ' || true)
		[ -z "$words" ] || bad "$p: kernel patch whose message names the test set-up: $words"
	fi
	vfile=$vdir/$(sha256sum <"$f" | cut -c1-16)-$tool_key
	if [ -x "$TREE/scripts/checkpatch.pl" ] && [ "${VERDICT_CACHE:-1}" = 1 ] && [ -e "$vfile" ]; then
		ncached=$((ncached + 1))
	elif [ -x "$TREE/scripts/checkpatch.pl" ]; then
		before=$fail
		# FILE_PATH_CHANGES ("does MAINTAINERS need updating?") fires on
		# every new file; instead we check below that get_maintainer.pl
		# finds a maintainer for each file the patch adds. The SPDX check
		# needs Debian's python3 with python3-ply, hence PATH.
		# UNKNOWN_COMMIT_ID: the base is Debian's tarball, one commit with
		# no upstream history, so no upstream sha can be looked up, and
		# checkpatch checks the form of a citation (GIT_COMMIT_ID) only
		# for an id it finds: scripts/cite-check.py checks the form.
		# Iterator macros (for_each_*) that nest two loops, like the
		# base's own for_each_lpi_its(), cannot be parenthesised:
		# COMPLEX_MACRO and MACRO_ARG_REUSE on a "#define for_each_" are
		# dropped, every other finding is kept.
		# It runs in TREE, so that an id that TREE's history has is
		# checked against its subject there (not in this repository).
		out=$(cd "$TREE" && PATH=/usr/bin:$PATH "$TREE/scripts/checkpatch.pl" -q --strict --no-summary \
			--showfile --ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID --root="$TREE" ${CHECKPATCH_FLAGS:-} "$f" 2>&1 |
			python3 -c '
import re, sys
for b in re.split(r"\n\s*\n", sys.stdin.read()):
    b = b.strip("\n")
    if not b:
        continue
    if re.match(r"\S+: (ERROR: Macros with complex values|CHECK: Macro argument reuse)", b) and \
       re.search(r"^[+ ]#define for_each_", b, re.M):
        continue
    print(b)
' || true)
		if [ -n "$out" ]; then
			bad "$p: checkpatch --strict:"
			printf '%s\n' "$out" | sed 's/^/     /' >&2
		fi
		for nf in $(awk '/^--- \/dev\/null/{getline; sub(/^\+\+\+ b\//, ""); print}' "$f"); do
			[ -e "$TREE/$nf" ] || continue
			m=$(cd "$TREE" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
				--no-rolestats -f "$nf" 2>/dev/null | grep -v '^linux-kernel@' || true)
			[ -n "$m" ] || bad "$p: new file $nf has no maintainer in MAINTAINERS"
		done
		if [ "$fail" = "$before" ]; then mkdir -p "$vdir" && : >"$vfile"; fi
	fi
done
if [ -n "$listed" ]; then
	# shellcheck disable=SC2086
	cites=$(cd "$PATCH_DIR" && python3 "$TOP/scripts/cite-check.py" $listed 2>&1) ||
		bad "commit citations not in checkpatch's form:
$(printf '%s\n' "$cites" | sed 's/^/     /')"
fi
cp_result="checkpatch --strict clean"
if [ ! -x "$TREE/scripts/checkpatch.pl" ]; then
	[ "${WORKBENCH_REQUIRE_TOOLS:-0}" != 1 ] ||
		bad "no $TREE/scripts/checkpatch.pl: checkpatch could not run (run make apply)"
	cp_result="checkpatch SKIPPED: no $TREE/scripts/checkpatch.pl (run make apply)"
	warn "$cp_result"
fi
postings=
if git -C "$TREE" rev-parse -q --verify 'stock^{commit}' >/dev/null 2>&1; then
	if TREE=$TREE SERIES=$SERIES "$TOP/scripts/check-postings.sh"; then
		postings=", each posting applies on its stated base"
	else
		bad "a posting does not apply on its stated base (scripts/check-postings.sh above)"
	fi
elif [ "${WORKBENCH_REQUIRE_TOOLS:-0}" = 1 ]; then
	bad "no tag 'stock' in $TREE: check-postings could not run (run make apply)"
fi
[ "$fail" = 0 ] || die $E_FAIL "$fail problem(s) in the series"
note=
[ "$ncached" = 0 ] || note=" ($ncached unchanged since they passed: not re-checked; VERDICT_CACHE=0 re-checks)"
info "PASS: $n patches in $(echo "$sections" | wc -w) series, series and patches/ agree, cover letters present, $cp_result$postings$note"
