#!/usr/bin/env bash
# Stage "deps": install everything the workbench needs from Debian's archive.
# Idempotent: packages already present are not reinstalled. Guest userland
# (arm64 .debs) is only downloaded, never installed on the host.
#
#   APT_LOCK_TIMEOUT=N  seconds each apt/dpkg step waits for another package
#                       manager to release the apt/dpkg locks (default 300;
#                       on a freshly booted machine unattended-upgrades often
#                       holds them for a few minutes); past it: exit 1
#   APT_LOCKS, APT_GET  the lock files waited for and the apt-get to run
#                       (for the workbench's own tests)
#   WITH_LAVA=1         also lava-dispatcher (lava-run, for make lava-check;
#                       make deps and make check set it)
stage=deps
. "$(dirname "$0")/lib.sh"

APT_LOCK_TIMEOUT=${APT_LOCK_TIMEOUT:-300}
case $APT_LOCK_TIMEOUT in '' | *[!0-9]*) die $E_USAGE "APT_LOCK_TIMEOUT='$APT_LOCK_TIMEOUT' is not a number of seconds" ;; esac
# dpkg's two locks, and apt-get's for the package lists (apt-get update,
# which does not wait on DPkg::Lock::Timeout) and the download cache.
APT_LOCKS=${APT_LOCKS:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock}
APT_GET=${APT_GET:-apt-get}

# lock_holder FILE: the pid of a process holding a lock on FILE (POSIX
# locks as apt and dpkg take them, or flock), from /proc/locks; nothing
# when FILE is not locked.
lock_holder() {
	local dev ino id
	[ -e "$1" ] && [ -r /proc/locks ] || return 0
	read -r dev ino < <(stat -L -c '%d %i' "$1")
	id=$(printf '%02x:%02x:%s' $(((dev >> 8) & 0xfff)) $(((dev & 0xff) | ((dev >> 12) & 0xfff00))) "$ino")
	awk -v id="$id" '{ for (i = 2; i <= NF; i++) if ($i == id) { print $(i - 1); exit } }' /proc/locks
}
# who PID: "pid N (its command line)"; for a pid not visible here (another
# pid namespace), the package managers that are.
who() {
	local cmd='' p others=''
	[ ! -r "/proc/$1/cmdline" ] || cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | cut -c1-120)
	cmd=${cmd% }
	if [ -z "$cmd" ]; then
		for p in /proc/[0-9]*; do
			case $(cat "$p/comm" 2>/dev/null) in
			apt | apt-get | aptitude | dpkg | unattended-upgr* | packagekitd) others+=" ${p#/proc/}:$(cat "$p/comm" 2>/dev/null)" ;;
			esac
		done
		cmd="?${others:+; package managers running:$others}"
	fi
	printf 'pid %s (%s)' "$1" "$cmd"
}
lock_advice() {
	printf '%s' "another package manager is running (on a freshly booted machine: unattended-upgrades, see 'systemctl status apt-daily-upgrade.service unattended-upgrades.service'); let it finish, then run 'make deps' again, or wait longer with APT_LOCK_TIMEOUT=<seconds> (now $APT_LOCK_TIMEOUT)"
}
# wait_apt_locks: until none of APT_LOCKS is held, saying by whom, at
# most APT_LOCK_TIMEOUT seconds; then exit 1 with advice.
wait_apt_locks() {
	local t0=$SECONDS f pid='' held='' last='' said=0
	while :; do
		held=
		for f in $APT_LOCKS; do
			pid=$(lock_holder "$f")
			[ -z "$pid" ] || { held="$f, held by $(who "$pid")"; break; }
		done
		if [ -z "$held" ]; then
			[ -z "$last" ] || info "apt/dpkg locks free after $((SECONDS - t0))s"
			return 0
		fi
		if [ "$held" != "$last" ]; then
			info "waiting for $held (up to ${APT_LOCK_TIMEOUT}s: APT_LOCK_TIMEOUT)"
			last=$held said=$SECONDS
		elif [ $((SECONDS - said)) -ge 30 ]; then
			info "still waiting for $held ($((SECONDS - t0))s of ${APT_LOCK_TIMEOUT}s)"
			said=$SECONDS
		fi
		[ $((SECONDS - t0)) -lt "$APT_LOCK_TIMEOUT" ] ||
			die $E_USAGE "gave up after ${APT_LOCK_TIMEOUT}s waiting for $held: $(lock_advice)"
		sleep 1
	done
}
# apt_get LOG ARGS...: apt-get ARGS once the locks are free, its output in
# LOG. Should another apt take a lock in between, apt-get waits for dpkg's
# (DPkg::Lock::Timeout) and the lost race for the lists lock is run again.
apt_get() {
	local log=$1 rc
	shift
	for _ in 1 2 3; do
		wait_apt_locks
		rc=0
		DEBIAN_FRONTEND=noninteractive "$APT_GET" -o DPkg::Lock::Timeout="$APT_LOCK_TIMEOUT" "$@" >"$log" 2>&1 || rc=$?
		[ "$rc" != 0 ] && grep -q 'Could not get lock' "$log" || return "$rc"
	done
	tail -n 5 "$log" >&2
	die $E_USAGE "$APT_GET $1: $(grep -m1 'Could not get lock' "$log"): $(lock_advice)"
}
# apt_update: apt-get update, or exit 1 with its last lines.
apt_update() {
	apt_get "$CACHE_DIR/apt-update.log" update -qq && return 0
	tail -n 20 "$CACHE_DIR/apt-update.log" >&2
	die $E_USAGE "apt-get update failed (log: $CACHE_DIR/apt-update.log)"
}

HOST_PKGS=(
	gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
	bc bison flex libssl-dev libelf-dev cpio xz-utils rsync kmod ccache
	make gcc python3 python3-ply python3-git git patch perl
	linux-source-6.12
	spin
	gnuplot-nox valgrind
	file
	# herd7 (scripts/litmus.sh builds herdtools7 from source)
	ocaml-nox ocaml-dune menhir libmenhir-ocaml-dev libzarith-ocaml-dev ocaml-findlib
)

missing=()
for p in "${HOST_PKGS[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing+=("$p")
done
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	info "adding the arm64 foreign architecture (guest userland)"
	[ "$(id -u)" = 0 ] || die $E_USAGE "need root to add the arm64 architecture (run: sudo $0)"
	wait_apt_locks
	dpkg --add-architecture arm64 || die $E_USAGE "dpkg --add-architecture arm64 failed"
	need_update=1
fi

if [ ${#missing[@]} -gt 0 ] || [ -n "${need_update:-}" ]; then
	[ "$(id -u)" = 0 ] || die $E_USAGE "need root to install: ${missing[*]} (run: sudo $0)"
	mkdir -p "$CACHE_DIR"
	info "apt-get update"
	apt_update
	if [ ${#missing[@]} -gt 0 ]; then
		info "installing: ${missing[*]}"
		if ! apt_get "$CACHE_DIR/apt-install.log" install -y -qq --no-install-recommends "${missing[@]}"; then
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
		mkdir -p "$CACHE_DIR"
		apt_update
		target=(-t "$codename-backports")
	fi
	info "installing qemu-system-arm ${target[*]} (have ${v:-none}, need ${QEMU_MIN#1:} or newer)"
	mkdir -p "$CACHE_DIR"
	if ! apt_get "$CACHE_DIR/apt-install.log" install -y -qq --no-install-recommends "${target[@]}" qemu-system-arm; then
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
	mkdir -p "$CACHE_DIR"
	apt_update
fi
# lava-dispatcher (make lava-check runs the pack's qemu jobs with its
# lava-run, offline). It depends on libguestfs, which pulls in
# qemu-system-x86: with QEMU from backports, that must come from the same
# backports, or apt refuses the mix.
if [ "${WITH_LAVA:-0}" = 1 ] && ! command -v lava-run >/dev/null; then
	[ "$(id -u)" = 0 ] || die $E_USAGE "need root to install lava-dispatcher (run: sudo WITH_LAVA=1 $0)"
	qx=qemu-system-x86
	case $v in *bpo*) qx="qemu-system-x86/$(. /etc/os-release && echo "$VERSION_CODENAME")-backports" ;; esac
	info "installing lava-dispatcher and $qx"
	mkdir -p "$CACHE_DIR"
	if ! apt_get "$CACHE_DIR/apt-install.log" install -y -qq --no-install-recommends lava-dispatcher "$qx"; then
		tail -n 20 "$CACHE_DIR/apt-install.log" >&2
		die $E_USAGE "apt-get install of lava-dispatcher failed (log: $CACHE_DIR/apt-install.log)"
	fi
fi
[ "${WITH_LAVA:-0}" != 1 ] || info "lava-dispatcher $(dpkg-query -W -f='${Version}' lava-dispatcher)"
info "host packages present (${#HOST_PKGS[@]} checked)"
info "PASS in $(elapsed)"
