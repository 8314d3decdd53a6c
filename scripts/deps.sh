#!/usr/bin/env bash
# Stage "deps": install everything the workbench needs from Debian's archive.
# Idempotent: packages already present are not reinstalled. Guest userland
# (arm64 .debs) is only downloaded, never installed on the host.
stage=deps
. "$(dirname "$0")/lib.sh"

HOST_PKGS=(
	gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
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
# QEMU 10.0 or newer. Under bookworm's QEMU 7.2 a KVM guest inside the
# test guest is lost, on the stock kernel as on the series, in an EL2
# exception loop about once in 40 runs of the memory selftests, and more
# often with 3 vCPUs on 2 host cores (Documentation/known-hangs.md). On a
# release whose own QEMU is older, it comes from that release's backports,
# which are part of Debian's archive.
QEMU_MIN=1:10.0
# Prints nothing when the package is not installed: dpkg-query fails for a
# package it has never seen, which must not end the script (set -e).
qemu_version() {
	{ dpkg-query -W -f='${Status} ${Version}\n' qemu-system-arm 2>/dev/null || true; } |
		sed -n 's/^install ok installed //p'
}
v=$(qemu_version)
if ! dpkg --compare-versions "${v:-0}" ge "$QEMU_MIN"; then
	[ "$(id -u)" = 0 ] || die $E_USAGE "need root to install QEMU >= ${QEMU_MIN#1:} (have ${v:-none}; run: sudo $0)"
	cand=$(apt-cache policy qemu-system-arm 2>/dev/null | sed -n 's/^ *Candidate: //p')
	target=()
	if ! dpkg --compare-versions "${cand:-0}" ge "$QEMU_MIN"; then
		codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
		[ -n "$codename" ] || die $E_USAGE "QEMU ${cand:-?} is older than ${QEMU_MIN#1:} and /etc/os-release names no release to take backports from"
		if ! grep -rqs -- "$codename-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
			info "adding $codename-backports (QEMU ${QEMU_MIN#1:} or newer)"
			cat >/etc/apt/sources.list.d/arm64-kvm-series-backports.sources <<EOS
Types: deb
URIs: http://deb.debian.org/debian
Suites: $codename-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
		fi
		apt-get update -qq || die $E_USAGE "apt-get update failed"
		target=(-t "$codename-backports")
	fi
	info "installing qemu-system-arm ${target[*]} (have ${v:-none}, need ${QEMU_MIN#1:} or newer)"
	mkdir -p "$CACHE_DIR"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${target[@]}" \
		qemu-system-arm >"$CACHE_DIR/apt-install.log" 2>&1; then
		tail -n 20 "$CACHE_DIR/apt-install.log" >&2
		die $E_USAGE "apt-get install of QEMU failed (log: $CACHE_DIR/apt-install.log)"
	fi
	v=$(qemu_version)
	dpkg --compare-versions "${v:-0}" ge "$QEMU_MIN" ||
		die $E_USAGE "qemu-system-arm is ${v:-missing} after install; need ${QEMU_MIN#1:} or newer"
fi
info "qemu-system-arm $v"
# The arm64 package lists must exist for scripts/initramfs.sh downloads.
if ! apt-cache policy busybox-static:arm64 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	[ "$(id -u)" = 0 ] || die $E_USAGE "arm64 package lists missing; run as root: apt-get update"
	apt-get update -qq || die $E_USAGE "apt-get update failed"
fi
info "host packages present (${#HOST_PKGS[@]} checked)"
info "PASS in $(elapsed)"
