# arm64 KVM allocator + vgic-its series: the workbench.
#
#   make          fetch, apply the series, build, boot nested QEMU, run the
#                 tests and the hackbench-in-L2 scenario, print the report
#   make check    the test suite (what .ci/run runs): the above plus the
#                 series checks, the model check, the userspace harness,
#                 kvm-unit-tests' ITS group in the guest (KUT_GROUPS; its
#                 source: KUT_SRC) and the workbench's own fault-injection tests
#   make help     everything else
#
# Variables (Kbuild/kselftest meanings): ARCH CROSS_COMPILE O= V=1 JOBS
# CACHE_DIR RESULTS_DIR TREE TESTS EXTRA_TESTS PLAN KSELFTEST_<NAME>_ARGS QEMU
# QEMU_CPU QEMU_SMP QEMU_MEM QEMU_EXTRA TIMEOUT STALL L2_GUESTS HACKBENCH_ARGS
# APT_LOCK_TIMEOUT KUT_SRC KUT_GROUPS KUT_TIMEOUT; see README.md. `make` exits 2 on any failure; the
# workbench's own exit code is the `I: run: exit N` line (README "Results and exit codes").
# make bench: BENCH_PAIRS BENCH_QUICK BENCH_REBUILD BENCH_QEMU_EXTRA and the
# scenario sizes listed in scripts/bench.sh and Documentation/workbench.md.

SHELL := /bin/bash
export ARCH ?= arm64
export CROSS_COMPILE ?= aarch64-linux-gnu-
export V ?= 0
export O TREE JOBS CACHE_DIR RESULTS_DIR TESTS EXTRA_TESTS PLAN TIMEOUT

PIPELINE := deps fetch apply check-series build selftests guest-rootfs initramfs boot
CHECK := deps fetch apply check-series litmus model harness allocator-gate build selftests guest-rootfs kvm-unit-tests initramfs boot variants lava-check workbench-selftest
# Checks that need no guest: make check runs them in a second lane while
# the guest boots (scripts/run.sh, STAGES_ALONGSIDE); `make check
# CHECK_ALONGSIDE=` runs every stage in CHECK's order. Not
# workbench-selftest: it boots guests of its own, whose kernels' watchdogs
# and whose TIMEOUT and STALL count wall-clock time; in the lane, at nice
# 10, they would get only the scraps a busy machine leaves.
CHECK_ALONGSIDE ?= check-series litmus model harness allocator-gate
# Guest stages that only make check adds to the main boot (not to the
# variant boots); `make check CHECK_GUEST_STAGES=` leaves them out.
CHECK_GUEST_STAGES ?= kvm-unit-tests kselftest-prereqs

.PHONY: all check help deps fetch apply tree export posting check-series check-postings build selftests \
	guest-rootfs kvm-unit-tests initramfs boot variants report litmus model harness allocator-gate workbench-selftest \
	check-bisect kernel-mutants gicv4 lava lava-check bench bench-report soak debug-compare clean distclean

all:
	@MAKE_TARGET=all STAGES_HOST="$(PIPELINE)" scripts/run.sh

# make check's deps also install lava-dispatcher, for lava-check.
check:
	@WITH_LAVA=1 MAKE_TARGET=check STAGES_HOST="$(CHECK)" STAGES_ALONGSIDE="$(CHECK_ALONGSIDE)" \
		STAGES_EXTRA="$(CHECK_GUEST_STAGES)" scripts/run.sh

help:
	@sed -n '/^# arm64/,/^$$/p' Makefile | sed 's/^# \{0,1\}//'
	@echo 'Stage targets (each one script under scripts/):'
	@echo '  deps          install host packages (apt) and the arm64 foreign arch'
	@echo '  fetch         unpack linux-source-6.12 into $$CACHE_DIR as a stock git repo'
	@echo '  apply (tree)  build/linux: stock commit + git am of every patch in series'
	@echo '  export        write build/linux commits back to patches/ and series'
	@echo '  check-series  series <-> patches/, authorship, checkpatch --strict, commit citations, check-postings'
	@echo '  check-postings  each posting applies with git am on stock + the postings it names'
	@echo '  posting       build/posting/<N>-<name>/: each posting as its poster sends it (POSTER=, To:/Cc:)'
	@echo '  build         merge configs/*.config, audit, cross-build Image'
	@echo '  selftests     cross-build static kvm selftests'
	@echo '  guest-rootfs  arm64 userland from Debian .debs (busybox, hackbench, qemu)'
	@echo '  kvm-unit-tests  cross-build kvm-unit-tests (KUT_SRC) into build/kvm-unit-tests, cached'
	@echo '  initramfs     L1 initramfs with tests, L2 VMM, L2 kernel + initramfs'
	@echo '  boot          boot L1 and run the guest stages (console: build/console.log)'
	@echo '  variants      boot again per selftests/variants.txt (nVHE; KPTI + 4-bit ASIDs/VMIDs; GICv4)'
	@echo '  gicv4         the vgic_* tests on a GICv4 ITS with GICv4 on (selftests/variants-gicv4.txt; not in check)'
	@echo '  lava          a LAVA test pack: kernel, initramfs and jobs per lane, board templates (build/lava)'
	@echo '  lava-check    the pack under lava-run offline: schema, verdicts equal to local boots, seeded failures'
	@echo '  report        rebuild results/latest/{results.ktap,results.json,SUMMARY.md}'
	@echo '  timings       rewrite the timing table in README.md from results/latest/results.json'
	@echo '  litmus        herd7: every ordering the allocator relies on (LKMM + Armv8)'
	@echo '  model         SPIN model check of the allocator + mutation gate'
	@echo '  harness       allocator C in userspace under TSan/ASan + mutation gate'
	@echo '  allocator-gate  the allocator KUnit suite on the host, each seeded bug killed by its named case'
	@echo '  workbench-selftest  fault injection: make check must fail when it should'
	@echo '  check-bisect  build after every patch of the series'
	@echo '  kernel-mutants  seeded allocator and ITS cache bugs must make their tests fail in the guest'
	@echo '  bench         stock vs patched kernel, alternating boots, ratios + plots (not in check)'
	@echo '  bench-report  rebuild bench.json, plots, tables from results/latest bench logs'
	@echo '  soak          DURATION=<s> (3600): debug kernel, forced rollovers, loop isolation + LPI churn + nested guests'
	@echo '  debug-compare PROFILE=default|debug|kcsan: stock vs patched, same tests: results side by side, splats by kind'
	@echo '  clean / distclean   build outputs / also $$CACHE_DIR'

fetch export posting check-series check-postings litmus lava lava-check build selftests guest-rootfs kvm-unit-tests initramfs boot variants model harness allocator-gate workbench-selftest check-bisect kernel-mutants bench soak debug-compare:
	@scripts/$@.sh

# make deps installs what make check needs, lava-dispatcher included
# (WITH_LAVA=0: not it); the deps stage of plain make does not.
deps:
	@WITH_LAVA=$${WITH_LAVA:-1} scripts/deps.sh

apply tree:
	@scripts/apply.sh

gicv4:
	@VARIANTS_FILE=selftests/variants-gicv4.txt scripts/variants.sh

report:
	@python3 scripts/report.py results/latest

.PHONY: timings
timings:
	@python3 scripts/timings.py results/latest README.md

bench-report:
	@python3 scripts/bench-report.py results/latest

clean:
	rm -rf build/kernel build/kernel-debug build/kernel-kcsan build/selftests build/kvm-unit-tests build/initramfs build/console.log

distclean: clean
	rm -rf build results "$${CACHE_DIR:-$${XDG_CACHE_HOME:-$$HOME/.cache}/arm64-kvm-series}"
