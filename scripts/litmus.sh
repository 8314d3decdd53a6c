#!/usr/bin/env bash
# Stage "litmus": the memory orderings that the ASID/VMID allocator relies
# on, as litmus tests checked with herd7 (selftests/litmus/check.sh): the
# LKMM tests that the series adds to the kernel tree,
# Documentation/arch/arm64/litmus/*.litmus, under the tree's
# tools/memory-model/; the AArch64 tests of selftests/litmus/ under
# herd7's aarch64.cat. A tree without Documentation/arch/arm64/litmus/
# tests (one without the series) fails the stage. KTAP into
# $RESULTS/ktap/litmus.ktap.
#
# herd7 is, in this order: $HERD7; herd7 on PATH; the build cached in
# $CACHE_DIR/herdtools7-7.57; else built from the source tarball
# HERDTOOLS_SRC (default ../shared/tools/herdtools7-7.57.tar.gz beside the
# repository) into that cache. With none of them the stage prints a SKIP
# line and passes, unless WORKBENCH_REQUIRE_TOOLS=1 (CI), which makes it a
# tool error (exit 1).
#   TREE=<dir>         kernel tree with the series: its
#                      Documentation/arch/arm64/litmus/ tests are run, with
#                      its tools/memory-model/ (default build/linux)
#   HERD_JOBS=<n>      dune jobs for the build (default: JOBS, 1 while a
#                      kernel compile runs)
#   LITMUS_CPU_SECONDS=<s> CPU time per herd7 run (default 60; a test
#   takes under 10 s)
#   LITMUS_DIR=<dir>   other tests than selftests/litmus, run with the
#                      tree's (the checks of herd7 and of the checker
#                      itself still run)
stage=litmus
. "$(dirname "$0")/lib.sh"

HERD_VERSION=7.57
HERD_CACHE=$CACHE_DIR/herdtools7-$HERD_VERSION
HERDTOOLS_SRC=${HERDTOOLS_SRC:-$(realpath -m "$TOP/../shared/tools/herdtools7-$HERD_VERSION.tar.gz")}
WORKBENCH_REQUIRE_TOOLS=${WORKBENCH_REQUIRE_TOOLS:-0}
case $WORKBENCH_REQUIRE_TOOLS in 0 | 1) ;; *) die $E_USAGE "WORKBENCH_REQUIRE_TOOLS='$WORKBENCH_REQUIRE_TOOLS' must be 0 or 1" ;; esac
TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
# The Debian 12 packages that the build from source needs.
HERD_BUILD_PKGS=(ocaml-nox ocaml-dune menhir libmenhir-ocaml-dev libzarith-ocaml-dev ocaml-findlib)

# build_herd: build herd7 from $HERDTOOLS_SRC in a temporary directory and
# move the finished prefix into $HERD_CACHE with one rename, so that a
# killed build leaves no partial cache behind.
build_herd() {
	local p missing=() tmp jobs t0 dt
	for p in "${HERD_BUILD_PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] ||
		die $E_USAGE "building herd7 from $HERDTOOLS_SRC needs the Debian packages: ${missing[*]} (scripts/deps.sh installs them; or: apt-get install ${missing[*]})"
	need_cmd tar dune ocamlfind menhir
	tool_jobs HERD_JOBS
	jobs=$TOOL_JOBS
	mkdir -p "$CACHE_DIR"
	# Left by a build that was killed (an hour is far more than a build takes).
	find "$CACHE_DIR" -maxdepth 1 -name '.herdtools7-build.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
	tmp=$(mktemp -d "$CACHE_DIR/.herdtools7-build.XXXXXX")
	build_pid=
	# shellcheck disable=SC2064 # expand $tmp now
	trap "[ -z \"\$build_pid\" ] || kill -TERM -- -\$build_pid 2>/dev/null; rm -rf '$tmp'" EXIT
	# A signal ends the script through exit, so that the EXIT trap runs.
	trap 'die 129 "hangup: the unfinished herd7 build is removed"' HUP
	trap 'die 130 "interrupted: the unfinished herd7 build is removed"' INT
	trap 'die 143 "terminated: the unfinished herd7 build is removed"' TERM
	info "building herd7 $HERD_VERSION from $HERDTOOLS_SRC (dune -j $jobs, log $tmp/build.log; about 3 min on 2 idle cores)"
	t0=$(date +%s)
	tar -xzf "$HERDTOOLS_SRC" -C "$tmp" || die $E_USAGE "cannot unpack $HERDTOOLS_SRC"
	[ -f "$tmp/herdtools7-$HERD_VERSION/version-gen.sh" ] ||
		die $E_USAGE "$HERDTOOLS_SRC is not the herdtools7-$HERD_VERSION source (no herdtools7-$HERD_VERSION/version-gen.sh)"
	# In a process group of its own, waited for in the background, so that
	# a signal stops it at once (the EXIT trap kills the group). Not the
	# user's dune cache: everything stays in $tmp.
	setsid -w sh -c 'cd "$1" && sh ./version-gen.sh "$2" &&
		DUNE_CACHE=disabled exec dune build -j "$3" --profile release herd/herd.exe' \
		sh "$tmp/herdtools7-$HERD_VERSION" "$HERD_CACHE" "$jobs" >"$tmp/build.log" 2>&1 &
	build_pid=$!
	if ! wait "$build_pid"; then
		build_pid=
		tail -n 30 "$tmp/build.log" >&2
		die $E_USAGE "herd7 build failed (the last lines of its log are above)"
	fi
	build_pid=
	mkdir -p "$tmp/prefix/bin" "$tmp/prefix/share/herdtools7"
	install -m755 "$tmp/herdtools7-$HERD_VERSION/_build/default/herd/herd.exe" "$tmp/prefix/bin/herd7"
	cp -r "$tmp/herdtools7-$HERD_VERSION/herd/libdir" "$tmp/prefix/share/herdtools7/herd"
	HERDLIB=$tmp/prefix/share/herdtools7/herd "$tmp/prefix/bin/herd7" -version >"$tmp/version" 2>&1 ||
		die $E_USAGE "the herd7 just built does not run: $(head -n1 "$tmp/version")"
	dt=$(($(date +%s) - t0))
	printf 'herd7 %s built from %s with dune -j %s in %d s on %s\n' \
		"$HERD_VERSION" "${HERDTOOLS_SRC##*/}" "$jobs" "$dt" "$(date -u +%FT%TZ)" >"$tmp/prefix/BUILD-INFO"
	if ! mv -T "$tmp/prefix" "$HERD_CACHE" 2>/dev/null; then
		# Another run installed it in the meantime: use that one.
		[ -x "$HERD_CACHE/bin/herd7" ] || die $E_USAGE "cannot install herd7 into $HERD_CACHE"
		info "$HERD_CACHE appeared during the build: using it"
	fi
	rm -rf "$tmp"
	trap - EXIT HUP INT TERM
	info "built herd7 $HERD_VERSION in $((dt / 60)):$(printf %02d $((dt % 60))) (dune -j $jobs): $HERD_CACHE/bin/herd7"
}

herd=
if [ -n "${HERD7:-}" ]; then
	herd=$(command -v "$HERD7" 2>/dev/null) || die $E_USAGE "HERD7='$HERD7' is not an executable"
elif command -v herd7 >/dev/null 2>&1; then
	herd=$(command -v herd7)
else
	if [ ! -x "$HERD_CACHE/bin/herd7" ] && [ -e "$HERD_CACHE" ]; then
		warn "$HERD_CACHE has no bin/herd7: removing it"
		rm -rf "$HERD_CACHE"
	fi
	if [ ! -x "$HERD_CACHE/bin/herd7" ] && [ -f "$HERDTOOLS_SRC" ]; then
		build_herd
	fi
	if [ -x "$HERD_CACHE/bin/herd7" ]; then
		herd=$HERD_CACHE/bin/herd7
		# The cached build finds its model library next to itself.
		export HERDLIB=$HERD_CACHE/share/herdtools7/herd
	fi
fi
if [ -z "$herd" ]; then
	how="opam install herdtools7.7.57 (or any newer herd7), HERDTOOLS_SRC=<herdtools7-7.57.tar.gz> to build it, or HERD7=<path to herd7>"
	[ "$WORKBENCH_REQUIRE_TOOLS" = 0 ] ||
		die $E_USAGE "herd7 not found (WORKBENCH_REQUIRE_TOOLS=1): no \$HERD7, no herd7 on PATH, no $HERD_CACHE/bin/herd7, no $HERDTOOLS_SRC; get it with: $how"
	info "SKIP: herd7 not found, no litmus test run; get it with: $how"
	if [ -n "${RESULTS:-}" ]; then
		mkdir -p "$RESULTS/ktap"
		printf 'KTAP version 1\nok 1 litmus # SKIP herd7 not found; %s\n' "$how" >"$RESULTS/ktap/litmus.ktap"
	fi
	exit 0
fi
version=$("$herd" -version 2>&1 | head -n1) || die $E_USAGE "$herd -version failed: $version"
info "herd7: $herd ($version)"

MM=$TREE/tools/memory-model
[ -f "$MM/linux-kernel.cfg" ] ||
	die $E_USAGE "no $MM/linux-kernel.cfg: run 'make apply' first, or set TREE=<kernel tree>"
KERNEL_LITMUS_DIR=$TREE/Documentation/arch/arm64/litmus
ktests=("$KERNEL_LITMUS_DIR"/*.litmus)
[ -f "${ktests[0]}" ] ||
	die $E_FAIL "no $KERNEL_LITMUS_DIR/*.litmus: $TREE lacks the series' litmus tests (TREE=<tree with the series>)"
info "kernel tree: $TREE (${#ktests[@]} tests in Documentation/arch/arm64/litmus/)"

# The verdict depends only on the tests (the tree's and ours), the scripts,
# the LKMM files of the tree and herd7 (see VERDICT_KEY in host-test.sh;
# VERDICT_CACHE=0 re-runs).
VERDICT_KEY="$(cd "$TOP" && sha256sum selftests/litmus/* scripts/litmus.sh scripts/host-test.sh scripts/cpu-budget.py)
$(cd "$KERNEL_LITMUS_DIR" && sha256sum -- *.litmus)
${LITMUS_DIR:+$(sha256sum "$LITMUS_DIR"/*.litmus)}
$(cd "$MM" && sha256sum linux-kernel.* lock.cat litmus-tests/*.litmus 2>/dev/null)
$herd $version"
export VERDICT_KEY HERD7=$herd MM KERNEL_LITMUS_DIR
exec "$TOP/scripts/host-test.sh" litmus "$TOP/selftests/litmus/check.sh"
