#!/usr/bin/env bash
# Stage "build": merge configs/*.config on top of allnoconfig, audit that
# every requested option survived, and cross-build arch/arm64/boot/Image.
#
#   TREE=<dir>  source (default build/linux)
#   O=<dir>     output (default build/kernel, build/kernel-<PROFILE>; Kbuild's O= meaning)
#   CONFIG_DIR=<dir>  where fragments live (default configs/)
#   CONFIGS="a b"  fragment names from CONFIG_DIR (default: base kvm test kunit faults gicv4 series,
#               plus the profile's fragment: debug or kcsan, see PROFILE in lib.sh)
#   JOBS, V=1, CCACHE=0 to disable ccache, CCACHE_DEPEND=0 for ccache
#               without its depend mode
#   AUDIT_MISSING=skip  do not fail on options no Kconfig of TREE defines
#               (for check-bisect: patches before the one adding them)
stage=build
. "$(dirname "$0")/lib.sh"
need_cmd "${CROSS_COMPILE}gcc" make bc flex bison

TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
O=$(realpath -m "${O:-${KBUILD_OUTPUT:-$KERNEL_O}}")
CONFIG_DIR=${CONFIG_DIR:-$TOP/configs}
CONFIGS=${CONFIGS:-base kvm test kunit faults gicv4 series $PROFILE_CONFIGS ${EXTRA_CONFIGS:-}}
[ -f "$TREE/Makefile" ] || die $E_USAGE "no kernel tree at $TREE: run 'make apply' first"

frags=()
for c in $CONFIGS; do
	f=$CONFIG_DIR/$c.config
	[ -f "$f" ] || die $E_USAGE "config fragment '$c' not found ($f); have: $(cd "$CONFIG_DIR" && ls *.config | tr '\n' ' ')"
	frags+=("$f")
done

mkdir -p "$O"
LOG=$O/build.log
cc="${CROSS_COMPILE}gcc"
if [ "${CCACHE:-1}" = 1 ] && command -v ccache >/dev/null; then
	cc="ccache ${CROSS_COMPILE}gcc"
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE_DIR/ccache}
	export CCACHE_BASEDIR=$TREE
	# Depend mode: a miss hashes the compiler's own dependency file (Kbuild
	# passes -Wp,-MMD) instead of running the preprocessor a second time.
	# A cold build of this config then takes 6:13 instead of 7:57 on 2
	# cores (5:40 without ccache); a warm one from an empty O= still hits.
	# CCACHE_DEPEND=0 turns it off (ccache itself reads any value of
	# CCACHE_DEPEND as "on" and refuses 0: hence CCACHE_NODEPEND).
	case ${CCACHE_DEPEND:-1} in
	1) export CCACHE_DEPEND=1 ;;
	0) unset CCACHE_DEPEND; export CCACHE_NODEPEND=1 ;;
	*) die $E_USAGE "CCACHE_DEPEND='$CCACHE_DEPEND' must be 0 or 1" ;;
	esac
fi
# Reproducible Image: no build host, user or time in the banner.
export KBUILD_BUILD_USER=kvm-arm64-series KBUILD_BUILD_HOST=workbench
export KBUILD_BUILD_TIMESTAMP="$(git -C "$TREE" log -1 --format=%cd --date=rfc2822 2>/dev/null || date -R)"
kmake=(make -C "$TREE" O="$O" ARCH="$ARCH" CROSS_COMPILE="$CROSS_COMPILE" CC="$cc" -j"$JOBS")
[ "$V" = 1 ] && kmake+=(V=1)

{
	echo "# to reproduce: TREE=$TREE O=$O CONFIGS=\"$CONFIGS\" $0"
	echo "# tree: $(git -C "$TREE" log -1 --format='%h %s' 2>/dev/null)"
} >"$LOG"

info "config: allnoconfig + ${CONFIGS}"
merged=$O/.fragments.config
cat "${frags[@]}" >"$merged"
# Fragments must not contradict each other.
dups=$(grep -o '^CONFIG_[A-Za-z0-9_]*\|^# CONFIG_[A-Za-z0-9_]* is not set' "$merged" |
	sed 's/^# //; s/ is not set//' | sort | uniq -d)
[ -z "$dups" ] || die $E_USAGE "option set twice across fragments: $dups"
if ! "${kmake[@]}" KCONFIG_ALLCONFIG="$merged" allnoconfig >>"$LOG" 2>&1; then
	tail -n 30 "$LOG" >&2
	die $E_FAIL "allnoconfig failed (log: $LOG)"
fi

# merge_config.sh only warns when a requested value does not survive:
# audit every line ourselves and fail on any difference.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		opt=${line%%=*}
		want=${line#*=}
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		want=n
		;;
	*) continue ;;
	esac
	got=$(grep -m1 "^$opt=\|^# $opt is not set" "$O/.config" || true)
	case "$got" in
	"$opt="*) got=${got#*=} ;;
	*) got=n ;;
	esac
	if [ "$got" != "$want" ] && [ "${AUDIT_MISSING:-fail}" = skip ] &&
		! grep -rqs --include='Kconfig*' -E "^[[:space:]]*(menu)?config ${opt#CONFIG_}\$" "$TREE"; then
		# check-bisect: the patch that adds the option is not applied yet.
		info "config audit: $opt is not defined in this tree, skipped"
		continue
	fi
	if [ "$got" != "$want" ]; then
		printf 'E: build: %s: requested %s, final .config has %s\n' "$opt" "$want" "$got" >&2
		bad=$((bad + 1))
	fi
done <"$merged"
[ "$bad" = 0 ] || die $E_FAIL "$bad requested config option(s) did not survive (missing dependency or renamed option)"
info "config audit: $(grep -c '^CONFIG_\|^# CONFIG_.* is not set' "$merged") requested options all present"

info "building Image with $JOBS jobs (log: $LOG)"
if ! "${kmake[@]}" Image >>"$LOG" 2>&1; then
	grep -E 'error:|Error [0-9]' "$LOG" | head -n 20 >&2 || true
	tail -n 20 "$LOG" >&2
	die $E_FAIL "kernel build failed (log: $LOG)"
fi
warnings=$(grep -c 'warning:' "$LOG" || true)
info "Image: $O/arch/arm64/boot/Image ($(du -h "$O/arch/arm64/boot/Image" | cut -f1), $warnings compiler warnings)"
info "PASS in $(elapsed)"
