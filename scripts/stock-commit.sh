#!/usr/bin/env bash
# stock-commit.sh TREE SHA256: commit TREE (a tree id of the current git
# repository: the unpacked linux-source-6.12 directory, every file added
# with "git add -f -A") as the stock commit, and print its id.
# The author, committer, date and message come from
# base/linux-source-6.12.env and the tree's own Makefile, so that the
# stock commit, the base-commit: of every patch, is the same whether
# scripts/fetch.sh made it or a user who unpacked the tarball by hand
# (README, "Using the patches without the workbench"):
#   git init -q && git add -f -A && git reset -q --hard \
#       "$(<repo>/scripts/stock-commit.sh "$(git write-tree)" <sha256 of the tarball>)"
# SERVED=<Debian version> names another build than DEBIAN_VERSION.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/base/linux-source-6.12.env"
[ $# = 2 ] && [[ $2 =~ ^[0-9a-f]{64}$ ]] || { echo "usage: $0 TREE SHA256" >&2; exit 1; }
tree=$1 sum=$2 served=${SERVED:-$DEBIAN_VERSION}
# The kernel version as `make kernelversion` prints it, from the top Makefile.
mk=$(git show "$tree:Makefile" 2>/dev/null || true)
kv() { awk -v k="$1" '$1 == k && $2 == "=" { print $3; exit }' <<<"$mk"; }
v=$(kv VERSION) p=$(kv PATCHLEVEL) s=$(kv SUBLEVEL) e=$(kv EXTRAVERSION)
[ -n "$v" ] || { echo "E: stock-commit: no kernel version in $tree:Makefile" >&2; exit 1; }
ver=$v${p:+.$p${s:+.$s}}$e
export GIT_AUTHOR_NAME="Debian $DEBIAN_PACKAGE" GIT_AUTHOR_EMAIL="debian-kernel@lists.debian.org"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE=$BASE_DATE GIT_COMMITTER_DATE=$BASE_DATE
git commit-tree "$tree" -m "Linux $ver ($DEBIAN_PACKAGE $served)" \
	-m "Unmodified source from Debian's $DEBIAN_PACKAGE $served, $(basename "$TARBALL") sha256 $sum."
