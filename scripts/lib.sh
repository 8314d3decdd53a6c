# shellcheck shell=bash
# Common helpers for the workbench stage scripts. Sourced, never executed.
#
# Exit codes (docs: README.md "Results and exit codes"):
#   0 pass, 1 tool/usage error, 2 build or test failure,
#   124 host timeout, 255 guest panic or QEMU exit without sentinel.

set -Eeuo pipefail
# A command that fails under set -e ends the stage with its own exit code;
# say which one, so that no stage ends without a message.
# (Only under set -e: sections that run with set +e handle their own codes.)
trap '_rc=$?; [[ $- != *e* ]] || printf "E: %s: line %s: \"%s\" failed (rc=%s)\n" "$stage" "$LINENO" "$BASH_COMMAND" "$_rc" >&2' ERR

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/arm64-kvm-series}
ARCH=${ARCH:-arm64}
CROSS_COMPILE=${CROSS_COMPILE:-aarch64-linux-gnu-}
JOBS=${JOBS:-$(nproc)}
V=${V:-0}
export ARCH CROSS_COMPILE CACHE_DIR

E_USAGE=1
E_FAIL=2
E_TIMEOUT=124
E_PANIC=255

_t0=$(date +%s)
stage=${stage:-$(basename "$0" .sh)}

info() { printf 'I: %s: %s\n' "$stage" "$*"; }
warn() { printf 'W: %s: %s\n' "$stage" "$*" >&2; }
# die CODE MESSAGE...
die() {
	local code=$1
	shift
	printf 'E: %s: %s\n' "$stage" "$*" >&2
	exit "$code"
}
# PROFILE: which kernel the stages build and boot.
#   default  build/kernel, fragments base kvm test kunit faults gicv4 series
#   debug    build/kernel-debug, + configs/debug.config (lockdep, KASAN, ...)
#   kcsan    build/kernel-kcsan, + configs/kcsan.config (KCSAN, lockdep)
# Each profile has its own output directory, so switching profiles does
# not rebuild the others. O=, IMAGE= and CONFIGS= still override.
PROFILE=${PROFILE:-default}
case $PROFILE in
default)
	KERNEL_O=$TOP/build/kernel
	PROFILE_CONFIGS=
	;;
debug | kcsan)
	KERNEL_O=$TOP/build/kernel-$PROFILE
	PROFILE_CONFIGS=$PROFILE
	;;
*) die $E_USAGE "PROFILE='$PROFILE' is not a profile (have: default debug kcsan)" ;;
esac
export PROFILE

elapsed() {
	local s=$(($(date +%s) - _t0))
	printf '%d:%02d:%02d' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
}
# run CMD...: print the command, then run it (quiet unless V=1 when $LOG set)
run() {
	printf '$ %s\n' "$*"
	"$@"
}
# quote_cmd ARGS...: the command as one copy-pasteable line (single quotes
# only where an argument needs them).
quote_cmd() {
	local a out=
	for a in "$@"; do
		case $a in
		*[!A-Za-z0-9_,.=:/+@%-]* | '') out+="'${a//\'/\'\\\'\'}' " ;;
		*) out+="$a " ;;
		esac
	done
	printf '%s' "${out% }"
}
# ensure_worktree TREE DIR REV: DIR is a worktree of the git tree TREE,
# checked out at REV (a commit id). A worktree of an earlier build/linux
# (make apply re-creates the tree) has lost its git directory and holds
# nothing but a checkout: it is re-created. Dies if DIR has local changes.
ensure_worktree() {
	local tree=$1 dir=$2 want=$3 have
	if [ -e "$dir/.git" ] && ! git -C "$dir" rev-parse -q --git-dir >/dev/null 2>&1; then
		warn "$dir belongs to an earlier build/linux: re-creating it"
		rm -rf "$dir"
	fi
	if [ ! -e "$dir/.git" ]; then
		[ ! -e "$dir" ] || die $E_USAGE "$dir exists but is no git worktree: remove it"
		git -C "$tree" worktree prune
		run git -C "$tree" worktree add --detach "$dir" "$want"
		return
	fi
	have=$(git -C "$dir" rev-parse HEAD)
	if [ "$want" != "$have" ]; then
		[ -z "$(git -C "$dir" status --porcelain --untracked-files=no)" ] ||
			die $E_USAGE "$dir is not at $want and has local changes; remove it: git -C $tree worktree remove --force $dir"
		run git -C "$dir" checkout -q --detach "$want"
	fi
}
# series_key STOCK_COMMIT SERIES PATCH_DIR: what the tree "make apply"
# makes from them is named by; apply skips a tree made from the same key.
series_key() {
	local p
	{
		echo "$1"
		cat "$2"
		(grep -v '^[[:space:]]*\(#\|$\)' "$2" || true) | sed 's|^patches/||' |
			while read -r p; do cat "$3/$p"; done
	} | sha256sum | cut -d' ' -f1
}
need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			die $E_USAGE "'$c' not found; run 'make deps' (scripts/deps.sh) first"
	done
}
# elf_closure ROOT FILE...: print (relative to ROOT) every shared library
# that the ELF FILEs need, recursively, plus the dynamic loader; dies
# naming the soname when one cannot be found inside ROOT.
elf_closure() {
	local root=$1 f so p dir found
	shift
	local -a todo=("$@")
	local -A seen=()
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		while IFS= read -r so; do
			[ -n "${seen[$so]:-}" ] && continue
			found=
			for dir in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu lib usr/lib; do
				if [ -e "$root/$dir/$so" ]; then
					found=$dir/$so
					break
				fi
			done
			[ -n "$found" ] || die $E_FAIL "$f needs $so, not found in $root"
			seen[$so]=$found
			printf '%s\n' "$found"
			todo+=("$found")
		done < <("${CROSS_COMPILE}readelf" -d "$root/$f" 2>/dev/null |
			sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
		p=$("${CROSS_COMPILE}readelf" -l "$root/$f" 2>/dev/null |
			sed -n 's/.*\[Requesting program interpreter: \/\(.*\)\]/\1/p')
		if [ -n "$p" ] && [ -z "${seen[$p]:-}" ]; then
			seen[$p]=1
			printf '%s\n' "$p"
		fi
	done
}

# tool_jobs VAR: make -j for a tool build (herd7, kvm-unit-tests) in $TOOL_JOBS:
# $VAR when set, 1 while a kernel compile runs (leave it the cores), else
# $JOBS. A VAR that is not a positive number is a usage error.
tool_jobs() {
	TOOL_JOBS=${!1:-}
	if [ -z "$TOOL_JOBS" ]; then
		if pgrep -x cc1 >/dev/null 2>&1; then TOOL_JOBS=1; else TOOL_JOBS=$JOBS; fi
	fi
	case $TOOL_JOBS in '' | *[!0-9]* | 0) die $E_USAGE "$1='$TOOL_JOBS' must be a positive number" ;; esac
}
