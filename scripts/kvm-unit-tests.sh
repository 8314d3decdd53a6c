#!/usr/bin/env bash
# Stage "kvm-unit-tests": cross-build kvm-unit-tests for arm64 and lay out
# the tree that the L1 guest's "kvm-unit-tests" stage runs
# (selftests/guest/stage-kvm-unit-tests.sh: run_tests.sh with the L2
# qemu-system-aarch64 as VMM and ACCEL=kvm, so that a real VMM drives the
# series' vgic-its, ITS save/restore through QEMU migration included).
# Runs before "initramfs", which copies KUT_OUT into the guest as
# /opt/kvm-unit-tests.
#
#   KUT_SRC=<dir|tarball>  the source: a kvm-unit-tests clone (its tracked
#                   and untracked, not ignored files; a plain tree: all of
#                   it) or a tarball of one (default
#                   ../shared/tools/kvm-unit-tests-1da1819e49fc.tar.gz
#                   beside the repository). The user's tree is never built
#                   in: the build happens in a copy.
#   KUT_GROUPS="its ..."  the groups of arm/unittests.cfg the guest runs
#                   (default "its"); each must name at least one test
#   KUT_OUT=<dir>   the tree for the guest (default build/kvm-unit-tests)
#   KUT_JOBS=<n>    make jobs (default: JOBS, 1 while a kernel compile runs)
#   KUT_KEEP=<n>    builds kept in the cache (default 3, the newest)
#
# The build is kept in $CACHE_DIR/kvm-unit-tests/<key>, the key naming the
# source's content, this script and the cross compiler, so a rerun with
# the same source only copies the tree (well under a second). Without a
# source the stage prints a SKIP line saying how to get one and passes
# (KUT_OUT then holds only a SKIP file, which the guest stage reports as
# its SKIP reason), unless WORKBENCH_REQUIRE_TOOLS=1 (CI): then exit 1.
stage=kvm-unit-tests
. "$(dirname "$0")/lib.sh"

# Where the guest finds the tree: config.mak's SRCDIR and ERRATATXT point
# there (scripts/initramfs.sh installs KUT_OUT at this path).
KUT_GUEST_DIR=/opt/kvm-unit-tests
KUT_SRC=${KUT_SRC:-$(realpath -m "$TOP/../shared/tools/kvm-unit-tests-1da1819e49fc.tar.gz")}
KUT_OUT=$(realpath -m "${KUT_OUT:-$TOP/build/kvm-unit-tests}")
KUT_GROUPS=${KUT_GROUPS:-its}
WORKBENCH_REQUIRE_TOOLS=${WORKBENCH_REQUIRE_TOOLS:-0}
case $WORKBENCH_REQUIRE_TOOLS in 0 | 1) ;; *) die $E_USAGE "WORKBENCH_REQUIRE_TOOLS='$WORKBENCH_REQUIRE_TOOLS' must be 0 or 1" ;; esac
[[ $KUT_GROUPS =~ ^[A-Za-z0-9_-]+([[:space:]]+[A-Za-z0-9_-]+)*$ ]] ||
	die $E_USAGE "KUT_GROUPS='$KUT_GROUPS' is not a list of group names (e.g. 'its gic timer')"
KUT_KEEP=${KUT_KEEP:-3}
case $KUT_KEEP in '' | *[!0-9]* | 0) die $E_USAGE "KUT_KEEP='$KUT_KEEP' must be a positive number" ;; esac

# publish DIR: make DIR the guest's tree, KUT_OUT, in one rename.
publish() {
	rm -rf "$KUT_OUT.tmp"
	mkdir -p "$(dirname "$KUT_OUT")"
	cp -a "$1" "$KUT_OUT.tmp"
	rm -rf "$KUT_OUT"
	mv "$KUT_OUT.tmp" "$KUT_OUT"
}

if [ ! -e "$KUT_SRC" ]; then
	how="git clone https://gitlab.com/kvm-unit-tests/kvm-unit-tests.git and run with KUT_SRC=<that clone>"
	[ "$WORKBENCH_REQUIRE_TOOLS" = 0 ] ||
		die $E_USAGE "no kvm-unit-tests source at $KUT_SRC (WORKBENCH_REQUIRE_TOOLS=1); get one: $how"
	reason="no kvm-unit-tests source at $KUT_SRC; get one: $how"
	info "SKIP: $reason"
	tmp=$(mktemp -d)
	echo "$reason" >"$tmp/SKIP"
	publish "$tmp"
	rm -rf "$tmp"
	if [ -n "${RESULTS:-}" ]; then
		mkdir -p "$RESULTS/ktap"
		printf 'KTAP version 1\nok 1 kvm-unit-tests # SKIP %s\n' "$reason" >"$RESULTS/ktap/kvm-unit-tests.ktap"
	fi
	exit 0
fi
need_cmd "${CROSS_COMPILE}gcc" make tar gzip git sha256sum getopt

# The source's identity: the sha256 of a tarball, or of a tree's files
# (path and content). src_files DIR: those files, NUL-separated, relative.
src_files() {
	if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$1" ls-files -z -c -o --exclude-standard
	else
		(cd "$1" && find . -type f ! -path './.git/*' -printf '%P\0')
	fi
}
if [ -d "$KUT_SRC" ]; then
	[ -x "$KUT_SRC/configure" ] && [ -f "$KUT_SRC/arm/unittests.cfg" ] ||
		die $E_USAGE "KUT_SRC='$KUT_SRC' is no kvm-unit-tests tree (no configure, no arm/unittests.cfg)"
	src_id=$(cd "$KUT_SRC" && src_files . | sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-64)
	if head=$(git -C "$KUT_SRC" rev-parse --short=12 HEAD 2>/dev/null); then
		[ -z "$(git -C "$KUT_SRC" status --porcelain 2>/dev/null)" ] || head+="-dirty"
	else
		head=unknown
	fi
elif [ -f "$KUT_SRC" ]; then
	src_id=$(sha256sum <"$KUT_SRC" | cut -c1-64)
	# git archive puts the commit into the tarball's pax header.
	head=$(gzip -dc "$KUT_SRC" 2>/dev/null | git get-tar-commit-id 2>/dev/null | cut -c1-12) || true
	[ -n "$head" ] || head=unknown
else
	die $E_USAGE "KUT_SRC='$KUT_SRC' is neither a directory nor a file"
fi
cc_version=$("${CROSS_COMPILE}gcc" --version | head -n1)
key=$(printf 'src %s\nscript %s\ncc %s\n' "$src_id" "$(sha256sum <"$0" | cut -c1-64)" "$cc_version" |
	sha256sum | cut -c1-16)
KUT_CACHE=$CACHE_DIR/kvm-unit-tests
cached=$KUT_CACHE/$head-$key

# build DIR: configure and make in a copy of the source, then lay out in
# DIR/tree what run_tests.sh needs at run time, with config.mak set for
# the guest: HOST=aarch64 (the harness refuses ACCEL=kvm unless HOST is
# the tests' architecture), SRCDIR and ERRATATXT where the tree lands, and
# no pretty-printed stacks (that needs python3, which the guest lacks).
build() {
	local dir=$1 src=$1/src tree=$1/tree jobs f top t0=$SECONDS
	mkdir -p "$src"
	if [ -d "$KUT_SRC" ]; then
		(cd "$KUT_SRC" && src_files . | tar -c --null -T - -f -) | tar -x -C "$src"
	else
		tar -xzf "$KUT_SRC" -C "$src" || die $E_USAGE "cannot unpack $KUT_SRC"
		# one top-level directory (git archive --prefix=...): build in it
		top=$(find "$src" -mindepth 1 -maxdepth 1)
		if [ ! -e "$src/configure" ] && [ "$(wc -l <<<"$top")" = 1 ] && [ -d "$top" ]; then
			src=$top
		fi
		[ -x "$src/configure" ] && [ -f "$src/arm/unittests.cfg" ] ||
			die $E_USAGE "$KUT_SRC holds no kvm-unit-tests tree (no configure, no arm/unittests.cfg)"
	fi
	tool_jobs KUT_JOBS
	jobs=$TOOL_JOBS
	info "building kvm-unit-tests $head from $KUT_SRC (make -j$jobs, log $dir/build.log)"
	# A plain tree that was built in place brings its objects along.
	if [ -f "$src/config.mak" ]; then
		(cd "$src" && make distclean) >"$dir/build.log" 2>&1 || true
	fi
	if ! (cd "$src" && ./configure --arch=arm64 --cross-prefix="$CROSS_COMPILE" \
		--disable-pretty-print-stacks && nice make -j"$jobs") >>"$dir/build.log" 2>&1; then
		tail -n 20 "$dir/build.log" >&2
		rm -rf "$KUT_OUT" # no tree of an earlier source for the guest
		die $E_FAIL "kvm-unit-tests build failed (the last lines of $dir/build.log are above)"
	fi
	mkdir -p "$tree/scripts" "$tree/arm"
	cp "$src/run_tests.sh" "$src/errata.txt" "$tree/"
	cp "$src"/scripts/*.bash "$tree/scripts/"
	[ ! -d "$src/scripts/arm64" ] || cp -r "$src/scripts/arm64" "$tree/scripts/"
	cp "$src/arm/run" "$src/arm/unittests.cfg" "$src"/arm/*.flat "$tree/arm/"
	sed -e "s|^HOST=.*|HOST=aarch64|" -e "s|^SRCDIR=.*|SRCDIR=$KUT_GUEST_DIR|" \
		-e "s|^ERRATATXT=.*|ERRATATXT=$KUT_GUEST_DIR/errata.txt|" \
		-e "s|^PRETTY_PRINT_STACKS=.*|PRETTY_PRINT_STACKS=no|" "$src/config.mak" >"$tree/config.mak"
	for f in HOST=aarch64 "SRCDIR=$KUT_GUEST_DIR" "ERRATATXT=$KUT_GUEST_DIR/errata.txt" ARCH=arm64; do
		grep -qx "$f" "$tree/config.mak" || die $E_FAIL "config.mak for the guest lacks $f (configure's output changed?)"
	done
	echo "$head" >"$tree/build-head"
	printf 'kvm-unit-tests %s from %s, built %s with %s (make -j%s, %d s)\n' "$head" "$KUT_SRC" \
		"$(date -u +%FT%TZ)" "$cc_version" "$jobs" $((SECONDS - t0)) >"$tree/BUILD-INFO"
	info "built in $((SECONDS - t0)) s: $(find "$tree/arm" -name '*.flat' | wc -l) tests (.flat), $(du -sh "$tree" | cut -f1)"
}

if [ -f "$cached/tree/config.mak" ]; then
	info "cached: $cached ($(head -n1 "$cached/tree/BUILD-INFO" 2>/dev/null))"
else
	mkdir -p "$KUT_CACHE"
	# Left by a build that was killed (an hour is far more than one takes).
	find "$KUT_CACHE" -maxdepth 1 -name '.build.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
	work=$(mktemp -d "$KUT_CACHE/.build.XXXXXX")
	# shellcheck disable=SC2064 # expand $work now
	trap "rm -rf '$work'" EXIT
	build "$work"
	mkdir -p "$work/keep"
	mv "$work/tree" "$work/build.log" "$work/keep/"
	if ! mv -T "$work/keep" "$cached" 2>/dev/null; then
		[ -f "$cached/tree/config.mak" ] || die $E_FAIL "cannot install the build into $cached"
		info "$cached appeared during the build: using it"
	fi
	# Keep the newest few builds (other sources, older scripts) only.
	find "$KUT_CACHE" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%T@ %p\n' | sort -rn |
		tail -n +$((KUT_KEEP + 1)) | cut -d' ' -f2- | xargs -r rm -rf
fi

# Every group asked for must name tests: a typo would otherwise run nothing.
# (run_tests.sh -l only reads unittests.cfg; it runs nothing.)
declare -A seen=()
total=0
for g in $KUT_GROUPS; do
	tests=$(cd "$cached/tree" && bash ./run_tests.sh -l -g "$g" 2>&1 </dev/null) ||
		die $E_FAIL "run_tests.sh -l -g $g failed in $cached/tree: $tests"
	[ -n "$tests" ] ||
		die $E_USAGE "KUT_GROUPS: group '$g' has no tests in arm/unittests.cfg (its groups: $(sed -n 's/^groups *= *//p' "$cached/tree/arm/unittests.cfg" | tr ' ' '\n' | sort -u | tr '\n' ' '))"
	info "group $g: $(echo $tests)"
	for t in $tests; do
		[ -n "${seen[$t]:-}" ] || total=$((total + 1))
		seen[$t]=1
	done
done
publish "$cached/tree"
info "$KUT_OUT: kvm-unit-tests $head, groups '$KUT_GROUPS' ($total tests; one in two groups runs once)"
info "PASS in $(elapsed)"
