#!/usr/bin/env bash
# Stage "fetch": unpack Debian's linux-source-6.12 tarball into the cache and
# record it as a one-commit git repository (the stock base). Idempotent.
stage=fetch
. "$(dirname "$0")/lib.sh"
. "$TOP/base/linux-source-6.12.env"
need_cmd git tar xz sha256sum

[ -r "$TARBALL" ] || die $E_USAGE "$TARBALL missing: run 'make deps' (apt-get install $DEBIAN_PACKAGE)"
served=$(dpkg-query -W -f='${Version}' "$DEBIAN_PACKAGE" 2>/dev/null || echo unknown)
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

mkdir -p "$CACHE_DIR"
work=$(mktemp -d "$CACHE_DIR/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
info "unpacking $TARBALL ($served)"
tar -C "$work" -xJf "$TARBALL"
src=$work/linux-source-6.12
[ -f "$src/Makefile" ] || die $E_FAIL "unexpected tarball layout (no linux-source-6.12/Makefile)"
ver=$(make -s -C "$src" kernelversion 2>/dev/null)
info "kernel version $ver"

info "committing the stock source"
export GIT_AUTHOR_NAME="Debian $DEBIAN_PACKAGE" GIT_AUTHOR_EMAIL="debian-kernel@lists.debian.org"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE=$BASE_DATE GIT_COMMITTER_DATE=$BASE_DATE
git -C "$src" init -q -b stock
# -f: the tarball holds files that the kernel's own .gitignore would hide.
git -C "$src" add -f -A .
git -C "$src" -c core.autocrlf=false commit -q -m "Linux $ver ($DEBIAN_PACKAGE $served)" \
	-m "Unmodified source from Debian's $DEBIAN_PACKAGE $served, $(basename "$TARBALL") sha256 $sum."
git -C "$src" tag "v$ver-debian"
rm -rf "$STOCK_GIT"
git clone -q --bare "$src" "$STOCK_GIT"
git -C "$STOCK_GIT" tag -f "v$ver-debian" stock >/dev/null
echo "$served $(git -C "$STOCK_GIT" rev-parse stock)" >"$stamp"
info "stock commit $(git -C "$STOCK_GIT" rev-parse stock) in $STOCK_GIT"
info "PASS in $(elapsed)"
