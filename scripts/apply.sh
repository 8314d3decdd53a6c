#!/usr/bin/env bash
# Stage "apply": make the kernel git tree: first commit = stock source,
# following commits = the patches named in `series`, applied with git am.
#
#   TREE=<dir>    where to create it (default build/linux)
#   SERIES=<file> apply order (default ./series; SERIES=/dev/null = stock)
#   FORCE=1       recreate even if the tree holds work not exported yet, or
#                 is already up to date (same stock commit, series and patches)
stage=apply
. "$(dirname "$0")/lib.sh"
. "$TOP/base/linux-source-6.12.env"
need_cmd git

TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
SERIES=${SERIES:-$TOP/series}
PATCH_DIR=${PATCH_DIR:-$(dirname "$SERIES")/patches}
[ "$SERIES" = /dev/null ] && PATCH_DIR=/dev/null
[ -r "$SERIES" ] || die $E_USAGE "series file '$SERIES' not found"

# The pinned base (make fetch) if it is there, else the one fetch fell back to.
# (ls would sort them by name: an older base first.)
stamp=$CACHE_DIR/stock-$DEBIAN_VERSION.git/.fetch-done
if [ ! -f "$stamp" ]; then
	stamp=$(ls -d -t "$CACHE_DIR"/stock-*.git/.fetch-done 2>/dev/null | head -n1 || true)
	[ -n "$stamp" ] || die $E_USAGE "no stock repository in $CACHE_DIR: run 'make fetch' first"
	warn "no stock repository of $DEBIAN_VERSION (base/linux-source-6.12.env): using $(dirname "$stamp"), the last one fetched"
fi
STOCK_GIT=$(dirname "$stamp")

# Never throw away work: a tree with uncommitted changes, or with commits
# made after the last apply, must be exported (make export) or FORCE=1.
if [ -d "$TREE/.git" ] && [ "${FORCE:-0}" != 1 ]; then
	if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
		die $E_USAGE "$TREE has uncommitted changes; commit + 'make export', or FORCE=1 to discard"
	fi
	if [ "$(git -C "$TREE" rev-parse HEAD)" != "$(git -C "$TREE" rev-parse -q --verify refs/tags/applied 2>/dev/null)" ]; then
		die $E_USAGE "$TREE has commits not exported to patches/; run 'make export' first, or FORCE=1 to discard them"
	fi
fi

mapfile -t patches < <( (grep -v '^[[:space:]]*\(#\|$\)' "$SERIES" || true) | sed 's|^patches/||')
# Sections "# == <N>-<name>: <title>": each is a posted series, whose last
# patch gets the tag part/<N>-<name> (make export reads them back).
declare -A part_end=()
cur=
while IFS= read -r line; do
	case $line in
	'# == '*) cur=${line#'# == '}; cur=${cur%%:*} ;;
	'#'* | '') ;;
	*) [ -z "$cur" ] || part_end[${line#patches/}]=$cur ;;
	esac
done <"$SERIES"
# The last patch of each section: later entries of the same part overwrite.
declare -A last_of=()
for p in "${patches[@]}"; do
	[ -z "${part_end[$p]:-}" ] || last_of[${part_end[$p]}]=$p
done
for p in "${patches[@]}"; do
	[ -f "$PATCH_DIR/$p" ] || die $E_USAGE "series names $p but $PATCH_DIR/$p does not exist"
done

# The tree is up to date when it was made by this script from the same
# stock commit and the same series and patch files: skip the clone and
# git am (a warm `make check` then spends no time here).
stock_commit=$(git -C "$STOCK_GIT" rev-parse -q --verify refs/heads/stock 2>/dev/null || true)
key=$(series_key "$stock_commit" "$SERIES" "$PATCH_DIR")
if [ -d "$TREE/.git" ] && [ "${FORCE:-0}" != 1 ] &&
	[ "$(cat "$TREE/.git/workbench-applied" 2>/dev/null)" = "$key" ] &&
	[ "$(git -C "$TREE" rev-parse HEAD)" = "$(git -C "$TREE" rev-parse -q --verify refs/tags/applied)" ]; then
	info "tree $TREE already has these ${#patches[@]} patches on stock (same files): not re-applied"
	info "PASS (${#patches[@]}/${#patches[@]} patches, up to date) in $(elapsed)"
	exit 0
fi

rm -rf "$TREE"
mkdir -p "$(dirname "$TREE")"
git clone -q --shared --no-checkout "$STOCK_GIT" "$TREE"
git -C "$TREE" checkout -q -b series origin/stock
# "stock" names the base commit only, as a tag (no branch of that name).
git -C "$TREE" branch -q -D stock
git -C "$TREE" tag stock origin/stock
git -C "$TREE" config user.name "arm64 KVM series"
git -C "$TREE" config user.email "kvm-arm64-series@example.org"
git -C "$TREE" config core.abbrev 12
git -C "$TREE" config pretty.fixes 'Fixes: %h ("%s")'
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	if ! git -C "$TREE" am -q --3way --keep-cr "$PATCH_DIR/$p" >"$TREE/.git/am.log" 2>&1; then
		cat "$TREE/.git/am.log" >&2
		git -C "$TREE" am --abort >/dev/null 2>&1 || true
		die $E_FAIL "patch $n/${#patches[@]} $p does not apply to $(git -C "$TREE" log -1 --format='%h %s')"
	fi
	pt=${part_end[$p]:-}
	[ -z "$pt" ] || [ "${last_of[$pt]}" != "$p" ] || git -C "$TREE" tag -f "part/$pt" HEAD >/dev/null
done
git -C "$TREE" tag -f applied HEAD >/dev/null
echo "$key" >"$TREE/.git/workbench-applied"
info "tree $TREE at $(git -C "$TREE" log -1 --format='%h %s')"
info "PASS (${#patches[@]}/${#patches[@]} patches) in $(elapsed)"
