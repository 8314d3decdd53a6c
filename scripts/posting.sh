#!/usr/bin/env bash
# "make posting": the postings as their poster sends them. For each
# section of series (or POSTINGS="<N>-<name> ..."), build/posting/<N>-<name>/
# gets its cover letter (0000-cover-letter.patch) and patches (0001-...),
# as git send-email takes them:
#  - From: and Signed-off-by: are the poster's: POSTER="Name <email>",
#    else git config user.name and user.email. The repository keeps the
#    project's placeholder identity; the DCO is the poster's to give, so
#    nothing is posted in the placeholder's name;
#  - To: the maintainers and Cc: the reviewers and lists that
#    scripts/get_maintainer.pl (of TREE, default build/linux) gives for
#    the posting's patches, on every file of the posting.
# Then: git send-email build/posting/<N>-<name>/*.patch
stage=posting
. "$(dirname "$0")/lib.sh"
need_cmd git perl
TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
SERIES=${SERIES:-$TOP/series}
P=$(dirname "$SERIES")/patches
OUT=$(realpath -m "${POSTING_OUT:-$TOP/build/posting}")
IDENT="arm64 KVM series <kvm-arm64-series@example.org>"
[ -x "$TREE/scripts/get_maintainer.pl" ] || die $E_USAGE "no $TREE/scripts/get_maintainer.pl: run 'make apply' first"

poster=${POSTER:-}
if [ -z "$poster" ]; then
	n=$(git config user.name || true) e=$(git config user.email || true)
	[ -n "$n" ] && [ -n "$e" ] && poster="$n <$e>"
fi
[ -n "$poster" ] || die $E_USAGE "no poster: set POSTER='Name <email>' or git config user.name and user.email"
[[ $poster =~ ^[^\<\>@]+\ \<[^\<\>@\ ]+@[^\<\>@\ ]+\.[^\<\>@\ ]+\>$ ]] ||
	die $E_USAGE "POSTER='$poster' is not 'Name <email>'"
case $poster in *@example.org\> | *@example.com\> | "$IDENT")
	die $E_USAGE "POSTER='$poster' is a placeholder: the Signed-off-by must be the poster's own" ;;
esac

mapfile -t parts < <(sed -n 's/^# == \([^:]*\):.*/\1/p' "$SERIES")
[ ${#parts[@]} -gt 0 ] || die $E_USAGE "no '# == <N>-<name>' sections in $SERIES: run make export"
want=${POSTINGS:-${parts[*]}}
for p in $want; do
	[[ " ${parts[*]} " == *" $p "* ]] || die $E_USAGE "POSTINGS: unknown posting '$p' (have: ${parts[*]})"
done
rm -rf "$OUT"
mkdir -p "$OUT"
for p in $want; do
	d=$OUT/$p
	mkdir -p "$d"
	cp "$P/covers/0000-$p.patch" "$d/0000-cover-letter.patch"
	for f in "$P/${p%%-*}"-[0-9]*.patch; do
		b=$(basename "$f")
		cp "$f" "$d/${b#*-}"
	done
	pf=()
	for f in "$d"/[0-9][0-9][0-9][0-9]-*.patch; do
		[ "$(basename "$f")" = 0000-cover-letter.patch ] || pf+=("$f")
	done
	gm() { (cd "$TREE" && perl scripts/get_maintainer.pl --no-rolestats --no-git --no-git-fallback "$@" \
		"${pf[@]}" 2>/dev/null) | paste -sd, | sed 's/,/, /g'; }
	to=$(gm --m --no-r --no-l)
	cc=$(gm --no-m --r --l)
	for f in "$d"/*.patch; do
		python3 - "$f" "$IDENT" "$poster" "$to" "$cc" <<'PY'
import sys
path, ident, poster, to, cc = sys.argv[1:]
out, hdr = [], True
for ln in open(path).read().split("\n"):
    if hdr and ln == "From: " + ident:
        ln = "From: " + poster
    if hdr and ln.startswith("Subject: "):
        if to:
            out.append("To: " + to)
        if cc:
            out.append("Cc: " + cc)
    if hdr and ln == "":
        hdr = False
    if ln == "Signed-off-by: " + ident:
        ln = "Signed-off-by: " + poster
    out.append(ln)
open(path, "w").write("\n".join(out))
PY
	done
	if grep -q -F "$IDENT" "$d"/*.patch; then
		die $E_FAIL "$p: the placeholder identity is left in $(grep -l -F "$IDENT" "$d"/*.patch | head -n1)"
	fi
	info "$p: $(ls "$d" | wc -l) files in $d (To: $(echo "$to" | tr ',' '\n' | grep -c . || true), Cc: $(echo "$cc" | tr ',' '\n' | grep -c . || true))"
done
info "as $poster; send with: git send-email $OUT/<N>-<name>/*.patch"
