#!/usr/bin/env bash
# Stage "fetch": unpack Debian's linux-source-6.12 tarball into the cache and
# record it as a one-commit git repository (the stock base). Idempotent.
stage=fetch
. "$(dirname "$0")/lib.sh"
. "$TOP/base/linux-source-6.12.env"
need_cmd git xz python3 sha256sum

# The series applies to DEBIAN_VERSION. When apt has installed another
# build (the archive moves on to each new 6.12.y), fetch the pinned one:
# Debian's security archive keeps earlier builds for a while. Only when
# that fails is the installed build used, with a warning.
STOCK_GIT=$CACHE_DIR/stock-$DEBIAN_VERSION.git
if [ -f "$STOCK_GIT/.fetch-done" ]; then
	info "cached: $STOCK_GIT ($(cat "$STOCK_GIT/.fetch-done"))"
	exit 0
fi
served=$(dpkg-query -W -f='${Version}' "$DEBIAN_PACKAGE" 2>/dev/null || echo unknown)
if [ "$served" != "$DEBIAN_VERSION" ]; then
	pinned=$CACHE_DIR/debs/$DEBIAN_PACKAGE-$DEBIAN_VERSION.tar.xz
	if [ ! -f "$pinned" ]; then
		info "installed $DEBIAN_PACKAGE is $served; downloading $DEBIAN_VERSION, the base of the series"
		mkdir -p "$CACHE_DIR/debs"
		dl=$(mktemp -d "$CACHE_DIR/debs/.dl.XXXXXX")
		if (cd "$dl" && apt-get download -q=2 "$DEBIAN_PACKAGE=$DEBIAN_VERSION" 2>&1 |
			grep -v 'unsandboxed' >&2; [ "${PIPESTATUS[0]}" = 0 ]) &&
			dpkg-deb --fsys-tarfile "$dl"/*.deb | tar -xO ".$TARBALL" >"$dl/tarball" &&
			[ "$(sha256sum "$dl/tarball" | cut -d' ' -f1)" = "$TARBALL_SHA256" ]; then
			mv "$dl/tarball" "$pinned"
		else
			warn "could not download $DEBIAN_PACKAGE=$DEBIAN_VERSION with a tarball of sha256 $TARBALL_SHA256"
		fi
		rm -rf "$dl"
	fi
	if [ -f "$pinned" ]; then
		TARBALL=$pinned
		served=$DEBIAN_VERSION
	fi
fi
[ -r "$TARBALL" ] || die $E_USAGE "$TARBALL missing: run 'make deps' (apt-get install $DEBIAN_PACKAGE)"
if [ "$served" != "$DEBIAN_VERSION" ]; then
	warn "*****************************************************************"
	warn "installed $DEBIAN_PACKAGE is $served, the series is based on $DEBIAN_VERSION"
	warn "results are NOT comparable with base/linux-source-6.12.env"
	warn "*****************************************************************"
fi

STOCK_GIT=$CACHE_DIR/stock-$served.git
stamp=$STOCK_GIT/.fetch-done
if [ -f "$stamp" ]; then
	info "cached: $STOCK_GIT ($(cat "$stamp"))"
	exit 0
fi

sum=$(sha256sum "$TARBALL" | cut -d' ' -f1)
if [ "$served" = "$DEBIAN_VERSION" ] && [ "$sum" != "$TARBALL_SHA256" ]; then
	die $E_USAGE "sha256 of $TARBALL is $sum, expected $TARBALL_SHA256 for $DEBIAN_VERSION"
fi

# The tarball goes straight into the objects of a new bare repository
# (scripts/tar-to-git.py feeds git fast-import): no unpacked tree to write
# and then delete, which would take longer than the commit itself.
# The index is the one `git add -f -A` makes of the unpacked tree (-f: the
# tarball holds files that the kernel's own .gitignore would hide; the
# blobs are the tarball's bytes, as with core.autocrlf=false), so the
# stock commit id is the one pinned in patches/, on every machine.
mkdir -p "$CACHE_DIR"
new=$(mktemp -d "$CACHE_DIR/.fetch.XXXXXX")
trap 'rm -rf "$new"' EXIT
export GIT_DIR=$new/stock.git GIT_INDEX_FILE=$new/index
git init -q --bare -b stock "$GIT_DIR"
info "importing $TARBALL ($served)"
# pack.compression=1: what git add uses for loose objects; no deltas (the
# previous blob in the tarball is no base for the next one).
xz -dc "$TARBALL" |
	python3 "$TOP/scripts/tar-to-git.py" linux-source-6.12 "$new/index-info" |
	git -c pack.compression=1 fast-import --quiet --depth=0 ||
	die $E_FAIL "could not import $TARBALL into $GIT_DIR (tar-to-git.py | git fast-import)"
git update-index -z --index-info <"$new/index-info"
tree=$(git write-tree)
ver=$(git show "$tree:Makefile" 2>/dev/null | awk '$1 == "VERSION" || $1 == "PATCHLEVEL" || $1 == "SUBLEVEL" { printf "%s%s", n++ ? "." : "", $3 }')
[ -n "$ver" ] || die $E_FAIL "unexpected tarball layout (no kernel version in linux-source-6.12/Makefile)"
info "kernel version $ver, $(git ls-files | wc -l) files"

info "committing the stock source"
commit=$(SERVED=$served "$TOP/scripts/stock-commit.sh" "$tree" "$sum") ||
	die $E_FAIL "scripts/stock-commit.sh failed"
git update-ref refs/heads/stock "$commit"
git tag "v$(git log -1 --format=%s "$commit" | cut -d" " -f2)-debian" "$commit"
unset GIT_DIR GIT_INDEX_FILE
rm -rf "$STOCK_GIT"
mv "$new/stock.git" "$STOCK_GIT"
echo "$served $(git -C "$STOCK_GIT" rev-parse stock)" >"$stamp"
info "stock commit $(git -C "$STOCK_GIT" rev-parse stock) in $STOCK_GIT"
info "PASS in $(elapsed)"
