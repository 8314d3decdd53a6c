#!/usr/bin/env bash
# Stage "allocator-gate": the allocator's KUnit suite
# (arch/arm64/lib/asid_kunit.c) built on the host, unmodified, with the
# real arch/arm64/lib/asid.c, arch/arm64/mm/context.c and
# arch/arm64/kvm/vmid.c against selftests/harness/shim, every case run
# (and the ones that cannot run must fail, not skip), then its mutation
# gate: each one-line mutant of selftests/harness/kunit-mutants.txt must be
# killed by a case named for it (selftests/harness/kunit_check.sh).
# Concurrency-only mutants are the harness stage's (check.sh).
#   TREE=<dir>  the generated kernel tree (default build/linux; run make apply)
#   JOBS        mutants built and run at a time (default: nproc)
stage=allocator-gate
. "$(dirname "$0")/lib.sh"
need_cmd gcc bc git
TREE=$(realpath -m "${TREE:-$TOP/build/linux}")
[ -e "$TREE/.git" ] || die $E_USAGE "no kernel tree at $TREE: run 'make apply' first"
[ -f "$TREE/arch/arm64/lib/asid_kunit.c" ] ||
	die $E_USAGE "$TREE/arch/arm64/lib/asid_kunit.c missing: not the series' tree"
# Deterministic (one thread, each case in a fresh process): the verdict
# depends only on these inputs, so an unchanged set re-uses a passing one
# (VERDICT_KEY in host-test.sh; VERDICT_CACHE=0 re-runs it).
VERDICT_KEY="$(cd "$TREE" && sha256sum arch/arm64/lib/asid_kunit.c arch/arm64/lib/asid.c \
	arch/arm64/mm/context.c arch/arm64/kvm/vmid.c arch/arm64/include/asm/asid.h \
	arch/arm64/include/asm/asid_trace.h)
$(cd "$TOP" && sha256sum selftests/harness/kunit_check.sh selftests/harness/kunit_host.c \
	selftests/harness/kunit-mutants.txt selftests/harness/shim/*.h \
	scripts/allocator-gate.sh scripts/host-test.sh)
$(gcc --version | head -n1)"
export VERDICT_KEY
KSRC=$TREE JOBS=$JOBS exec "$TOP/scripts/host-test.sh" allocator-gate \
	"$TOP/selftests/harness/kunit_check.sh"
