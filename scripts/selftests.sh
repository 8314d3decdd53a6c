#!/usr/bin/env bash
# Stage "selftests": cross-build tools/testing/selftests/kvm for arm64 from
# the (patched) tree, statically linked so the busybox guest can run them.
#
#   TREE=<dir>  source (default build/linux)
#   KSFT_OUT=<dir>  output (default build/selftests)
stage=selftests
. "$(dirname "$0")/lib.sh"
need_cmd "${CROSS_COMPILE}gcc" make

TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
KSFT_OUT=$(realpath -m "${KSFT_OUT:-$TOP/build/selftests}")
[ -d "$TREE/tools/testing/selftests/kvm" ] || die $E_USAGE "no kernel tree at $TREE: run 'make apply' first"
mkdir -p "$KSFT_OUT"
LOG=$KSFT_OUT/build.log
echo "# to reproduce: TREE=$TREE KSFT_OUT=$KSFT_OUT $0" >"$LOG"

# uapi headers go to $KSFT_OUT/usr, built with O= so that the source tree
# stays clean (an in-tree headers_install leaves arch/arm64/include/generated
# behind, and every later O= kernel build then refuses to run).
info "headers_install into $KSFT_OUT/usr"
make -C "$TREE" O="$KSFT_OUT/headers" ARCH="$ARCH" INSTALL_HDR_PATH="$KSFT_OUT/usr" \
	headers_install >>"$LOG" 2>&1 || die $E_FAIL "headers_install failed (log: $LOG)"

# USERLDFLAGS is lib.mk's documented knob; LDFLAGS on the command line
# would replace the kvm Makefile's own -pthread/-no-pie.
info "building kvm selftests ($JOBS jobs, static)"
if ! make -C "$TREE/tools/testing/selftests/kvm" ARCH="$ARCH" CROSS_COMPILE="$CROSS_COMPILE" \
	USERLDFLAGS=-static OUTPUT="$KSFT_OUT/kvm" LINUX_HDR_PATH="$KSFT_OUT/usr/include/" -j"$JOBS" >>"$LOG" 2>&1; then
	grep -E 'error:|Error [0-9]' "$LOG" | head -n 20 >&2 || true
	die $E_FAIL "selftest build failed (log: $LOG)"
fi
n=0
while IFS= read -r f; do
	file "$f" | grep -q 'statically linked' || die $E_FAIL "$f is not statically linked"
	n=$((n + 1))
done < <(find "$KSFT_OUT/kvm" -type f -perm -u+x ! -name '*.sh' ! -name '*.o' ! -name '*.a')
[ "$n" -gt 0 ] || die $E_FAIL "no selftest binaries produced (log: $LOG)"
info "$n static test binaries in $KSFT_OUT/kvm"
info "PASS in $(elapsed)"
