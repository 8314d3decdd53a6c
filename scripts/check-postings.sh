#!/usr/bin/env bash
# check-postings: each posting (a "# == <N>-<name>" section of series)
# applies with git am on stock plus exactly the postings its cover letter
# depends on ("Depends-on:" in Documentation/cover-letters/<N>-<name>.txt,
# the "applies on:" line of series), and its cover letter's
# prerequisite-patch-id lines are those postings' patches. The patches
# are applied as git am applies them (git apply, no fuzz, no 3-way), to a
# temporary index of TREE read from stock: no checkout. Run by
# scripts/check-series.sh.
#   TREE=<dir>  the kernel tree with the tag "stock" (default build/linux)
#   POSTINGS="<N>-<name> ..."  only these (default: all)
stage=check-postings
. "$(dirname "$0")/lib.sh"
need_cmd git mktemp
TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
SERIES=${SERIES:-$TOP/series}
P=$(dirname "$SERIES")/patches
git -C "$TREE" rev-parse -q --verify 'stock^{commit}' >/dev/null ||
	die $E_USAGE "no tag 'stock' in $TREE: run 'make apply' first"
idx=$(mktemp)
trap 'rm -f "$idx" "$idx.log"' EXIT
# apply_all PATCH...: onto the temporary index, in order
apply_all() {
	local f
	for f in "$@"; do
		GIT_INDEX_FILE=$idx git -C "$TREE" apply --cached "$f" >"$idx.log" 2>&1 || return 1
	done
}

fail=0
n=0
while IFS='|' read -r part deps; do
	[ -z "${POSTINGS:-}" ] || [[ " $POSTINGS " == *" $part "* ]] || continue
	n=$((n + 1))
	GIT_INDEX_FILE=$idx git -C "$TREE" read-tree stock || die $E_FAIL "git read-tree stock failed in $TREE"
	ids=
	ok=1
	for d in $deps; do
		# shellcheck disable=SC2046
		if ! apply_all $(ls "$P/${d%%-*}"-[0-9]*.patch); then
			warn "$part: its prerequisite $d does not apply on stock + the prerequisites before it"
			ok=0
			break
		fi
		ids="$ids $(for f in "$P/${d%%-*}"-[0-9]*.patch; do git patch-id --stable <"$f" | cut -d' ' -f1; done)"
	done
	# shellcheck disable=SC2046
	if [ "$ok" = 1 ] && ! apply_all $(ls "$P/${part%%-*}"-[0-9]*.patch); then
		warn "$part: does not apply with git am on stock${deps:+ +$deps}: $(grep -m1 -E 'error' "$idx.log" || true)"
		ok=0
	fi
	want=$(printf '%s\n' $ids | sed '/^$/d' | sort)
	have=$(sed -n 's/^prerequisite-patch-id: //p' "$P/covers/0000-$part.patch" | sort)
	if [ "$want" != "$have" ]; then
		warn "$part: the cover letter's prerequisite-patch-id lines ($(echo "$have" | grep -c . || true)) are not the patches of $deps ($(echo "$want" | grep -c . || true))"
		ok=0
	fi
	if [ "$ok" = 1 ]; then
		np=$(ls "$P/${part%%-*}"-[0-9]*.patch | wc -l)
		info "$part: applies on stock${deps:+ + $deps} ($np patch$([ "$np" = 1 ] || echo es))"
	else
		fail=$((fail + 1))
	fi
done < <(awk '/^# == /{sub(/^# == /, ""); sub(/:.*/, ""); p=$0} /^#    applies on: /{sub(/^#    applies on: stock ?\+? ?/, ""); print p "|" $0}' "$SERIES")
[ "$n" -gt 0 ] || die $E_FAIL "no '#    applies on:' lines in $SERIES${POSTINGS:+ for POSTINGS='$POSTINGS'}: run make export"
[ "$fail" = 0 ] || die $E_FAIL "$fail of $n postings do not apply on their stated base"
info "PASS: $n postings, each applies on stock plus exactly the postings it names"
