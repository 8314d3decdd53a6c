#!/usr/bin/env bash
# Stage "check-series": the cheap checks a reviewer runs first.
#  - series and patches/ agree (no missing file, no unlisted patch);
#  - every patch has a body, Author and Signed-off-by of the project identity;
#  - checkpatch.pl --strict passes on every patch;
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
if [ -n "$listed" ] && [ ! -f "$PATCH_DIR/0000-cover-letter.patch" ]; then
	bad "patches/0000-cover-letter.patch missing (make export writes it)"
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
		# no upstream history, so no upstream sha can be looked up; the
		# format of commit citations (GIT_COMMIT_ID) is still checked.
		out=$(PATH=/usr/bin:$PATH "$TREE/scripts/checkpatch.pl" --strict --terse --no-summary \
			--showfile --ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID --root="$TREE" ${CHECKPATCH_FLAGS:-} "$f" 2>&1 || true)
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
[ -x "$TREE/scripts/checkpatch.pl" ] || warn "no $TREE/scripts/checkpatch.pl: checkpatch skipped (run make apply)"
[ "$fail" = 0 ] || die $E_FAIL "$fail problem(s) in the series"
note=
[ "$ncached" = 0 ] || note=" ($ncached unchanged since they passed: not re-checked; VERDICT_CACHE=0 re-checks)"
info "PASS: $n patches, series and patches/ agree, checkpatch --strict clean$note"
