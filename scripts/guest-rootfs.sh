#!/usr/bin/env bash
# Stage "guest-rootfs": build the L1 guest's userland from Debian arm64 .debs.
#
# Output (copied into the L1 initramfs by the initramfs stage):
#   $CACHE_DIR/guest/rootfs           bin/busybox (static), usr/bin/hackbench,
#                                     usr/bin/timeout (GNU, has --foreground),
#                                     usr/bin/qemu-system-aarch64 (L2 VMM), the
#                                     loader and every shared library they need
#   $CACHE_DIR/guest/rootfs-kut       what only the kvm-unit-tests harness needs
#                                     (guest stage kvm-unit-tests): bash, getopt,
#                                     ps, GNU coreutils/grep/sed, getconf, ncat in
#                                     opt/kut-tools/bin, /usr/bin/env, and the
#                                     libraries only they need; laid over the
#                                     rootfs by the initramfs stage only when
#                                     that guest stage runs
#   $CACHE_DIR/guest/rootfs.manifest  package=version used, then each file
#   $CACHE_DIR/guest/debs             downloaded .debs (a plain cache)
#
# Packages are fetched with 'apt-get download' and unpacked with 'dpkg-deb -x';
# nothing is installed on the host and no arm64 code is run (no qemu-user).
# Idempotent: a stamp records the package versions; a second run with the
# same versions prints "cached". Builds in a temp dir and renames at the end,
# so an interrupted run leaves the previous rootfs (or none), never half of one.
stage=guest-rootfs
. "$(dirname "$0")/lib.sh"
need_cmd apt-get apt-cache dpkg-deb aarch64-linux-gnu-readelf sha256sum flock

GUEST_DIR=$CACHE_DIR/guest
DEBS=$GUEST_DIR/debs
ROOTFS=$GUEST_DIR/rootfs
ROOTFS_KUT=$GUEST_DIR/rootfs-kut
MANIFEST=$GUEST_DIR/rootfs.manifest
STAMP=$GUEST_DIR/rootfs.stamp
MA=aarch64-linux-gnu
READELF=aarch64-linux-gnu-readelf

# What goes into the rootfs: "package path-in-package path-in-rootfs".
# Libraries are not listed: they follow from the ELF NEEDED entries.
TARGETS=(
	"busybox-static /bin/busybox bin/busybox"
	"rt-tests /usr/bin/hackbench usr/bin/hackbench"
	"coreutils /usr/bin/timeout usr/bin/timeout"
	"qemu-system-arm /usr/bin/qemu-system-aarch64 usr/bin/qemu-system-aarch64"
)
# The kvm-unit-tests harness (run_tests.sh and the arm/run it calls) needs
# bash, util-linux getopt (enhanced), procps ps (-p; busybox's has none),
# GNU coreutils, grep and sed, getconf, and for the migration tests ncat
# (QMP over a unix socket). They go into opt/kut-tools/bin, which only the
# kvm-unit-tests stage puts first in PATH: the other stages keep busybox.
KUT_TOOLS=opt/kut-tools/bin
KUT_TARGETS=(
	"bash /bin/bash $KUT_TOOLS/bash"
	"util-linux /usr/bin/getopt $KUT_TOOLS/getopt"
	"procps /bin/ps $KUT_TOOLS/ps"
	"grep /bin/grep $KUT_TOOLS/grep"
	"sed /bin/sed $KUT_TOOLS/sed"
	"libc-bin /usr/bin/getconf $KUT_TOOLS/getconf"
	"ncat /usr/bin/ncat $KUT_TOOLS/ncat"
	# ncat loads OpenSSL's legacy provider, and says so on every QMP call
	# of a migration test when it cannot.
	"libssl3 /usr/lib/$MA/ossl-modules/legacy.so usr/lib/$MA/ossl-modules/legacy.so"
)
# The coreutils the harness calls (and a few a person debugging it would).
for _c in cat cp date echo false ln ls mkdir mktemp mv readlink rm sleep touch true uname; do
	KUT_TARGETS+=("coreutils /bin/$_c $KUT_TOOLS/$_c")
done
for _c in basename cut dirname env expr head id mkfifo nproc printf realpath seq sort stat tail tee \
	test timeout tr uniq wc; do
	KUT_TARGETS+=("coreutils /usr/bin/$_c $KUT_TOOLS/$_c")
done
unset _c
# libc6 is a seed too because it ships the dynamic loader (PT_INTERP).
SEEDS=(busybox-static rt-tests coreutils qemu-system-arm libc6 bash util-linux procps grep sed libc-bin ncat)
# Directories where the loader looks by default (Debian's multiarch glibc,
# no ld.so.cache in the guest); libraries are kept where their package had them.
LIBDIRS=("lib/$MA" "usr/lib/$MA" lib usr/lib)

# apt-get download as root drops to user _apt, which cannot write under
# /root/.cache; downloading as root is harmless here (no maintainer scripts).
APT_OPTS=()
[ "$(id -u)" = 0 ] && APT_OPTS=(-o APT::Sandbox::User=root)

# closure: the seeds plus, recursively, the arm64 library packages they
# Depend/PreDepend on; sorted names. One 'apt-cache depends --recurse' call
# (each apt-cache call costs seconds here), then a walk restricted to library
# edges. Only the first member of an or-group counts (what apt would pick).
# Non-library dependencies (python3 of rt-tests, qemu-system-common/-data,
# adduser) carry no shared objects our binaries need; a wrong guess shows up
# as an unresolved soname in build(), which is fatal.
closure() {
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "${SEEDS[@]/%/:arm64}" 2>/dev/null |
		awk -v seeds="${SEEDS[*]}" '
		/^[^ ]/ { cur = $1; sub(/:arm64$/, "", cur); inalt = 0; next }
		/^ [ |](Pre)?Depends: / {
			take = !inalt
			inalt = (substr($0, 2, 1) == "|")
			n = $2
			if (take && n ~ /^(lib[^<>]*|zlib1g):arm64$/) {
				sub(/:arm64$/, "", n)
				dep[cur] = dep[cur] " " n
			}
		}
		END {
			nq = split(seeds, q, " ")
			for (i = 1; i <= nq; i++) seen[q[i]] = 1
			for (i = 1; i <= nq; i++) {
				nd = split(dep[q[i]], d, " ")
				for (j = 1; j <= nd; j++)
					if (!(d[j] in seen)) { seen[d[j]] = 1; q[++nq] = d[j] }
			}
			for (p in seen) print p
		}' | sort
}

# candidates PKG...: "pkg version" for each; dies naming a package apt cannot offer.
candidates() {
	local out p
	out=$(apt-cache policy "${@/%/:arm64}" 2>/dev/null |
		awk '/^[^ ].*:$/ { p = $1; sub(/:arm64:$/, "", p) }
		     /^  Candidate: / { print p, $2 }')
	for p in "$@"; do
		grep -q "^$p [0-9]" <<<"$out" ||
			die $E_USAGE "$p:arm64 has no candidate version; run 'make deps' (arm64 lists), or try: apt-get update; apt-cache policy $p:arm64"
	done
	echo "$out"
}

deb_path() { echo "$DEBS/${1}_${2//:/%3a}_arm64.deb"; }

# load_sha256: SHA256[pkg] from the archive index, for every package of
# $VERSIONS, in one apt-cache call (each call costs seconds of CPU here).
declare -A SHA256=()
load_sha256() {
	local p v h
	while read -r p v h; do
		SHA256[$p]=$h
	done < <(awk '{ print $1 ":arm64=" $2 }' <<<"$VERSIONS" | xargs apt-cache show 2>/dev/null |
		awk '/^Package: / { p = $2 } /^Version: / { v = $2 } /^SHA256: / { print p, v, $2 }')
}

# deb_ok PKG VERSION: the cached .deb exists and matches the archive's SHA256
# (catches a file truncated by an interrupted download).
deb_ok() {
	local f
	f=$(deb_path "$1" "$2")
	[ -s "$f" ] && [ -n "${SHA256[$1]:-}" ] &&
		[ "$(sha256sum <"$f" | cut -d' ' -f1)" = "${SHA256[$1]}" ]
}

# fetch: download every package of $VERSIONS missing from $DEBS. One apt-get
# call for all (fast); on failure, retry one by one to name the culprit.
fetch() {
	local p v missing=() tmp
	load_sha256
	while read -r p v; do
		deb_ok "$p" "$v" || missing+=("$p:arm64=$v")
	done <<<"$VERSIONS"
	[ ${#missing[@]} -gt 0 ] || { info "all $(wc -l <<<"$VERSIONS") .debs cached in $DEBS"; return 0; }
	info "downloading ${#missing[@]} packages into $DEBS"
	mkdir -p "$DEBS"
	# Download into a temp dir on the same filesystem, then rename: a killed
	# download never leaves a partial file under its final name.
	tmp=$(mktemp -d "$DEBS/.dl.XXXXXX")
	if ! (cd "$tmp" && apt-get "${APT_OPTS[@]}" -q download "${missing[@]}" >/dev/null); then
		for p in "${missing[@]}"; do
			(cd "$tmp" && apt-get "${APT_OPTS[@]}" -q download "$p" >/dev/null) || {
				rm -rf "$tmp"
				die $E_USAGE "cannot download $p; try by hand: (cd $DEBS && apt-get download $p), or 'apt-get update' / 'make deps' first"
			}
		done
	fi
	mv -f "$tmp"/*.deb "$DEBS"/
	rm -rf "$tmp"
	for p in "${missing[@]}"; do
		v=${p#*=}
		p=${p%%:*}
		deb_ok "$p" "$v" || die $E_USAGE "$(deb_path "$p" "$v") missing or corrupt after download; try: apt-get clean && (cd $DEBS && apt-get download $p:arm64=$v)"
	done
}

# unpack: each package into its own tree, so every file knows its package.
unpack() {
	local p v
	while read -r p v; do
		dpkg-deb -x "$(deb_path "$p" "$v")" "$WORK/pkgs/$p"
	done <<<"$VERSIONS"
}

# index_sonames: SONAME[name]="package relative-dir" for every shared object
# in a loader directory of any unpacked package (first package wins).
declare -A SONAME=()
index_sonames() {
	local p d f
	while read -r p _; do
		for d in "${LIBDIRS[@]}"; do
			[ -d "$WORK/pkgs/$p/$d" ] || continue
			for f in "$WORK/pkgs/$p/$d"/*.so*; do
				[ -e "$f" ] || continue
				f=${f##*/}
				[ -n "${SONAME[$f]:-}" ] || SONAME[$f]="$p $d"
			done
		done
	done <<<"$VERSIONS"
}

needed() { "$READELF" -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
interp() { "$READELF" -l "$1" 2>/dev/null | sed -n 's/.*program interpreter: \(.*\)\]$/\1/p'; }

declare -A USED=() # package -> 1, for the manifest
FILES=()           # "rootfs-path package", for the manifest

# pkg_resolve PKG PATH: follow symlinks inside the unpacked package. An
# absolute link target means the package root, not the host's / (cp -L would
# silently pick up a host file, or an x86 one).
pkg_resolve() {
	local root=$WORK/pkgs/$1 path=/${2#/} t n=0
	while [ -L "$root$path" ]; do
		n=$((n + 1))
		[ $n -le 20 ] || die $E_FAIL "$1: symlink loop at $2"
		t=$(readlink "$root$path")
		case $t in
		/*) path=$t ;;
		*) path=${path%/*}/$t ;;
		esac
		path=$(realpath -m -s "$path")
	done
	[ -f "$root$path" ] || die $E_FAIL "$1 has no $2 (package layout changed?)"
	echo "$root$path"
}

# put PKG SRC DST: copy a file out of an unpacked package (dereferenced, so
# versioned-name symlinks collapse into one file named as the consumer asks).
put() {
	local src dst=$STAGING/$3
	src=$(pkg_resolve "$1" "$2")
	mkdir -p "${dst%/*}"
	cp --preserve=mode "$src" "$dst"
	USED[$1]=1
	FILES+=("$3 $1")
}

# add_libs FILE: copy the NEEDED closure of FILE (a rootfs path), depth-first.
add_libs() {
	local bin=$1 so p d
	for so in $(needed "$STAGING/$bin"); do
		have_lib "$so" && continue
		[ -n "${SONAME[$so]:-}" ] ||
			die $E_FAIL "$bin needs $so, which no downloaded arm64 package provides (add its package to SEEDS or fix closure())"
		read -r p d <<<"${SONAME[$so]}"
		put "$p" "$d/$so" "$d/$so"
		add_libs "$d/$so"
	done
}

have_lib() {
	local d
	for d in "${LIBDIRS[@]}"; do [ -e "$STAGING/$d/$1" ] && return 0; done
	return 1
}

# add_interp FILE: the loader named in PT_INTERP, as Debian lays it out: the
# real file in the multiarch dir, /lib/ld-linux-aarch64.so.1 a relative symlink.
add_interp() {
	local i so p d rel
	i=$(interp "$STAGING/$1")
	[ -n "$i" ] && [ ! -e "$STAGING$i" ] || return 0
	so=${i##*/}
	[ -n "${SONAME[$so]:-}" ] || die $E_FAIL "$1 needs interpreter $i, not found in libc6:arm64"
	read -r p d <<<"${SONAME[$so]}"
	have_lib "$so" || put "$p" "$d/$so" "$d/$so"
	if [ "${i#/}" != "$d/$so" ]; then
		mkdir -p "$STAGING${i%/*}"
		rel=$(realpath -m --relative-to="$STAGING${i%/*}" "$STAGING/$d/$so")
		ln -s "$rel" "$STAGING$i"
		FILES+=("${i#/} $p")
	fi
}

# put_targets "<pkg> <src> <dst>"...: each file with its interpreter and libraries.
put_targets() {
	local t p src dst
	for t in "$@"; do
		read -r p src dst <<<"$t"
		put "$p" "$src" "$dst"
		add_interp "$dst"
		add_libs "$dst"
	done
}

build() {
	put_targets "${TARGETS[@]}"
	# busybox must be static: it is PID 1's shell before any library exists.
	[ -z "$(interp "$STAGING/bin/busybox")$(needed "$STAGING/bin/busybox")" ] ||
		die $E_FAIL "bin/busybox from busybox-static is not static"
	# Everything from here on is the kvm-unit-tests harness's: the files
	# FILES gains now (its tools and the libraries the base lacks) are
	# what split_kut() moves into the rootfs-kut tree.
	NBASE=${#FILES[@]}
	put_targets "${KUT_TARGETS[@]}"
	# run_tests.sh and arm/run start with "#!/usr/bin/env bash".
	mkdir -p "$STAGING/usr/bin"
	ln -s "../../$KUT_TOOLS/env" "$STAGING/usr/bin/env"
	FILES+=("usr/bin/env coreutils")
	chmod 755 "$STAGING"
}

# split_kut DIR: move the harness's files (FILES from NBASE on) out of
# $STAGING into DIR, at the same paths.
split_kut() {
	local i f
	mkdir -p "$1"
	for ((i = NBASE; i < ${#FILES[@]}; i++)); do
		f=${FILES[$i]%% *}
		mkdir -p "$1/${f%/*}"
		mv "$STAGING/$f" "$1/$f"
	done
	rmdir "$STAGING/$KUT_TOOLS" "$STAGING/${KUT_TOOLS%/*}" "$STAGING/${KUT_TOOLS%%/*}"
	chmod 755 "$1"
}

# verify DIR: every ELF is AArch64, its interpreter exists and every NEEDED
# soname resolves inside DIR. Independent of how build() got there; one
# readelf call for the whole tree (with several files it prints "File: ").
verify() {
	local root=$1 kind f val d nelf=0 nneed=0 files=()
	local -A have=()
	for d in "${LIBDIRS[@]}"; do
		for f in "$root/$d"/*; do [ -e "$f" ] && have[${f##*/}]=1; done
	done
	mapfile -d '' files < <(find "$root" -type f -print0)
	[ ${#files[@]} -ge 4 ] || die $E_FAIL "rootfs has only ${#files[@]} files"
	while read -r kind f val; do
		f=${f#"$root"/}
		case $kind in
		machine)
			nelf=$((nelf + 1))
			[ "$val" = AArch64 ] || die $E_FAIL "$f is a $val ELF, not AArch64"
			;;
		interp) [ -e "$root$val" ] || die $E_FAIL "$f: interpreter $val missing from rootfs" ;;
		needed)
			nneed=$((nneed + 1))
			[ -n "${have[$val]:-}" ] || die $E_FAIL "$f: NEEDED $val not in rootfs"
			;;
		esac
	done < <("$READELF" -h -l -d -W "${files[@]}" 2>/dev/null | awk '
		/^File: / { f = substr($0, 7) }
		/^  Machine: / { m = $0; sub(/^  Machine: */, "", m); gsub(/ /, "_", m); print "machine", f, m }
		/program interpreter: / { i = $0; sub(/.*interpreter: /, "", i); sub(/\]$/, "", i); print "interp", f, i }
		/\(NEEDED\)/ { n = $0; sub(/.*\[/, "", n); sub(/\]$/, "", n); print "needed", f, n }')
	[ $nelf -ge 4 ] || die $E_FAIL "only $nelf ELF files found in the rootfs"
	info "verified $nelf ELF files, $nneed NEEDED entries, all resolved inside the rootfs"
}

write_manifest() {
	local p v i
	{
		echo "# guest-rootfs manifest: arm64 packages used (package=version), then files"
		while read -r p v; do
			[ -n "${USED[$p]:-}" ] && echo "$p=$v"
		done <<<"$VERSIONS"
		echo "# downloaded for the dependency closure but not needed by any file:"
		while read -r p v; do
			[ -n "${USED[$p]:-}" ] || echo "# $p=$v"
		done <<<"$VERSIONS"
		echo "# files (rootfs path, package; \"kut\": in rootfs-kut, for the kvm-unit-tests stage only):"
		for ((i = 0; i < ${#FILES[@]}; i++)); do
			echo "${FILES[$i]}$([ "$i" -lt "$NBASE" ] || echo ' kut')"
		done | sort
	} >"$1"
}

# Optional smoke test: only if the host already has qemu-user (never required).
smoke() {
	command -v qemu-aarch64-static >/dev/null || return 0
	qemu-aarch64-static -L "$ROOTFS" "$ROOTFS/usr/bin/qemu-system-aarch64" --version | head -1 |
		sed "s/^/I: $stage: qemu-user: /" || warn "qemu-system-aarch64 --version failed under qemu-aarch64-static"
}

# stamp_key: package versions plus this script's hash; either changing rebuilds.
stamp_key() { printf '%s\nscript %s\n' "$VERSIONS" "$(sha256sum <"$0" | cut -d' ' -f1)"; }

main() {
	mkdir -p "$GUEST_DIR"
	# One run at a time; also makes it safe to sweep temp dirs of killed runs.
	exec 9>"$GUEST_DIR/.lock"
	flock -n 9 || die $E_USAGE "another guest-rootfs run holds $GUEST_DIR/.lock"
	rm -rf "$GUEST_DIR"/.rootfs.* "$DEBS"/.dl.*

	local pkgs
	# Fast path: re-ask apt for the candidates of the packages in the stamp
	# (one apt-cache call). If the closure itself changed, some package's
	# version changed with it, so comparing versions is enough.
	if [ -d "$ROOTFS" ] && [ -d "$ROOTFS_KUT" ] && [ -f "$MANIFEST" ] && [ -f "$STAMP" ]; then
		mapfile -t pkgs < <(awk '$1 != "script" { print $1 }' "$STAMP")
		VERSIONS=$(candidates "${pkgs[@]}")
		if [ "$(cat "$STAMP")" = "$(stamp_key)" ]; then
			info "cached: $ROOTFS ($(grep -c '^[^#]*=' "$MANIFEST") packages, $(du -sh "$ROOTFS" | cut -f1))"
			info "PASS in $(elapsed)"
			exit 0
		fi
	fi
	mapfile -t pkgs < <(closure)
	VERSIONS=$(candidates "${pkgs[@]}")
	info "closure: ${#pkgs[@]} arm64 packages"
	fetch

	WORK=$(mktemp -d "$GUEST_DIR/.rootfs.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
	STAGING=$WORK/rootfs
	mkdir -p "$WORK/pkgs" "$STAGING"
	info "unpacking"
	unpack
	index_sonames
	info "copying binaries and their library closure"
	build
	# The whole (rootfs with rootfs-kut laid over it), then the rootfs alone.
	verify "$STAGING"
	split_kut "$WORK/rootfs-kut"
	verify "$STAGING"
	write_manifest "$WORK/manifest"

	# Swap in: stamp removed first and written last, so a crash in between
	# means "rebuild", never "cached" with a mismatched tree.
	rm -f "$STAMP"
	rm -rf "$ROOTFS.old" "$ROOTFS_KUT.old"
	[ ! -d "$ROOTFS" ] || mv "$ROOTFS" "$ROOTFS.old"
	[ ! -d "$ROOTFS_KUT" ] || mv "$ROOTFS_KUT" "$ROOTFS_KUT.old"
	mv "$STAGING" "$ROOTFS"
	mv "$WORK/rootfs-kut" "$ROOTFS_KUT"
	mv "$WORK/manifest" "$MANIFEST"
	rm -rf "$ROOTFS.old" "$ROOTFS_KUT.old"
	stamp_key >"$STAMP"

	smoke
	info "rootfs $ROOTFS: $(du -sh "$ROOTFS" | cut -f1), $ROOTFS_KUT: $(du -sh "$ROOTFS_KUT" | cut -f1), ${#USED[@]} of ${#pkgs[@]} packages used, ${#FILES[@]} files ($((${#FILES[@]} - NBASE)) for kvm-unit-tests); manifest $MANIFEST"
	info "PASS in $(elapsed)"
}

main "$@"
