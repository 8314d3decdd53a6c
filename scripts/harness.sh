#!/usr/bin/env bash
# Stage "harness": the allocator's C compiled unmodified in userspace under
# TSan and ASan+UBSan, stock (vmid.c of the tag "stock") and the series'
# library (arch/arm64/lib/asid.c + vmid.c), each with its mutation gate
# (selftests/harness/check.sh).
#   TREE=<dir>  the generated kernel tree (default build/linux; run make apply)
stage=harness
. "$(dirname "$0")/lib.sh"
need_cmd gcc git
TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
[ -d "$TREE/.git" ] || die $E_USAGE "no kernel tree at $TREE: run 'make apply' first"
KSRC=$TREE exec "$TOP/scripts/host-test.sh" harness "$TOP/selftests/harness/check.sh"
