#!/usr/bin/env bash
# Stage "deps": install everything the workbench needs from Debian's archive.
# Idempotent: packages already present are not reinstalled. Guest userland
# (arm64 .debs) is only downloaded, never installed on the host.
stage=deps
. "$(dirname "$0")/lib.sh"

HOST_PKGS=(
	gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
	qemu-system-arm qemu-utils
	bc bison flex libssl-dev libelf-dev cpio xz-utils rsync kmod ccache
	make gcc python3 python3-ply python3-git git patch perl
	linux-source-6.12
	spin
	gnuplot-nox valgrind
	file
)

missing=()
for p in "${HOST_PKGS[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing+=("$p")
done
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	info "adding the arm64 foreign architecture (guest userland)"
	dpkg --add-architecture arm64
	need_update=1
fi

if [ ${#missing[@]} -gt 0 ] || [ -n "${need_update:-}" ]; then
	[ "$(id -u)" = 0 ] || die $E_USAGE "need root to install: ${missing[*]} (run: sudo $0)"
	info "apt-get update"
	apt-get update -qq || die $E_USAGE "apt-get update failed"
	if [ ${#missing[@]} -gt 0 ]; then
		info "installing: ${missing[*]}"
		mkdir -p "$CACHE_DIR"
		if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			"${missing[@]}" >"$CACHE_DIR/apt-install.log" 2>&1; then
			tail -n 20 "$CACHE_DIR/apt-install.log" >&2
			die $E_USAGE "apt-get install failed (log: $CACHE_DIR/apt-install.log); try by hand: apt-get install ${missing[*]}"
		fi
	fi
fi
# The arm64 package lists must exist for scripts/initramfs.sh downloads.
if ! apt-cache policy busybox-static:arm64 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	[ "$(id -u)" = 0 ] || die $E_USAGE "arm64 package lists missing; run as root: apt-get update"
	apt-get update -qq || die $E_USAGE "apt-get update failed"
fi
info "host packages present (${#HOST_PKGS[@]} checked)"
info "PASS in $(elapsed)"
