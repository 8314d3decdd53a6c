#!/usr/bin/env bash
# Stage "initramfs": the L1 test guest's initramfs: busybox, the guest
# scripts of selftests/guest, the kvm selftests, hackbench, GNU timeout,
# the L2 VMM (qemu-system-aarch64 + libraries) and, under /l2, the kernel
# Image and a tiny initramfs for the nested guests.
#
#   IMAGE=<Image>   kernel for L1 and L2 (default: the PROFILE's kernel,
#                   build/kernel[-<profile>]/arch/arm64/boot/Image)
#   KSFT_OUT=<dir>  built selftests (default build/selftests)
#   STAGES="..."    guest stages, in order (default: kvm-check kselftest-kvm nested-hackbench,
#                   then STAGES_EXTRA, then kmemleak with PROFILE=debug)
#   STAGES_EXTRA="..."  guest stages added to the default STAGES (make check
#                   sets kvm-unit-tests; ignored when STAGES is given)
#   KUT_OUT=<dir>   the kvm-unit-tests tree (default build/kvm-unit-tests, made by
#                   scripts/kvm-unit-tests.sh), installed as /opt/kvm-unit-tests
#                   with $CACHE_DIR/guest/rootfs-kut (its harness's tools) when
#                   STAGES has kvm-unit-tests
#   KUT_GROUPS="its ..."  kvm-unit-tests groups the guest runs (default its)
#   KUT_TIMEOUT=N   seconds per kvm-unit-tests test, times TIMEOUT_SCALE
#                   (default 300; a migration test's two QEMUs included)
#   KUT_MAX_SMP=N   vCPUs of the tests' L2 VMs with smp = $MAX_SMP (default 4:
#                   the ITS tests need 4; KVM runs 4 vCPUs on fewer L1 CPUs)
#   PLAN=<file>     the selftest plan (default selftests/plan/kvm.plan; same
#                   format: "kvm:<test>[@<mode>] <timeout> [args]" per line)
#   EXTRA_TESTS="<entry>; ..."  plan entries added after PLAN's, ';'-separated,
#                   each "kvm:<test>[@<mode>] [<timeout> [args]]" (timeout
#                   300 unless given), e.g.
#                   EXTRA_TESTS='kvm:access_tracking_perf_test 300 -b 16M'
#   TESTS="<glob>..."  only plan entries (EXTRA_TESTS' too) matching one glob,
#                   e.g. TESTS='kvm:vgic* kvm:steal_time'
#   STREAM_SECONDS=N  how often a running selftest's new output is copied
#                   to the console (default 10; 0: only when the test ends)
#   PLAN_ONLY=1     print the guest's plan (after all of the above and
#                   TIMEOUT_SCALE) and exit; needs no Image or rootfs
#   SKIPLIST=<file> tests not to run, with reasons (default selftests/skiplist.txt;
#                   SKIPLIST=/dev/null runs everything in the plan)
#   LANE=<name>     which boot this is, for the skiplist's "<lane>: " entries
#                   (default boot, the main one; variants.sh: the variant's name)
#   KSELFTEST_<NAME>_ARGS  replace a plan entry's arguments (EXTRA_TESTS' too)
#   TIMEOUT_SCALE=N multiply the plan's per-test timeouts and L2_TIMEOUT
#                   (default 1; 4 with PROFILE=debug or kcsan: checked kernels
#                   run several times slower under TCG)
#   L2_GUESTS L2_SMP L2_MEM L2_RUNS L2_TIMEOUT HACKBENCH_ARGS  nested stage
#   BENCH_*, SOAK_*  copied (quoted) into /etc/workbench/env for the "bench"
#                   stage (scripts/bench.sh sets them; sizes of its scenarios)
#   OUT=<file>      output (default build/initramfs/l1.cpio.gz)
stage=initramfs
. "$(dirname "$0")/lib.sh"

IMAGE=${IMAGE:-$KERNEL_O/arch/arm64/boot/Image}
KSFT_OUT=${KSFT_OUT:-$TOP/build/selftests}
OUT=${OUT:-$TOP/build/initramfs/l1.cpio.gz}
if [ "$PROFILE" = debug ]; then
	STAGES=${STAGES:-kvm-check kselftest-kvm nested-hackbench${STAGES_EXTRA:+ $STAGES_EXTRA} kmemleak}
else
	STAGES=${STAGES:-kvm-check kselftest-kvm nested-hackbench${STAGES_EXTRA:+ $STAGES_EXTRA}}
fi
if [ "$PROFILE" = default ]; then TIMEOUT_SCALE=${TIMEOUT_SCALE:-1}; else TIMEOUT_SCALE=${TIMEOUT_SCALE:-4}; fi
case $TIMEOUT_SCALE in '' | *[!0-9]* | 0) die $E_USAGE "TIMEOUT_SCALE='$TIMEOUT_SCALE' is not a positive integer" ;; esac
GUEST_ROOTFS=${GUEST_ROOTFS:-$CACHE_DIR/guest/rootfs}
SKIPLIST=${SKIPLIST:-$TOP/selftests/skiplist.txt}
LANE=${LANE:-boot}
[[ $LANE =~ ^[a-z0-9-]+$ ]] || die $E_USAGE "LANE='$LANE' is not a lane name ([a-z0-9-]+)"
L2_GUESTS=${L2_GUESTS:-2}
L2_SMP=${L2_SMP:-2}
L2_MEM=${L2_MEM:-256}
L2_RUNS=${L2_RUNS:-1}
L2_TIMEOUT=${L2_TIMEOUT:-$((300 * TIMEOUT_SCALE))}
HACKBENCH_ARGS=${HACKBENCH_ARGS:--s 512 -l 20 -g 2 -f 5 -P}
STREAM_SECONDS=${STREAM_SECONDS:-10}
case $STREAM_SECONDS in '' | *[!0-9]*) die $E_USAGE "STREAM_SECONDS='$STREAM_SECONDS' is not a number of seconds" ;; esac
KUT_OUT=${KUT_OUT:-$TOP/build/kvm-unit-tests}
KUT_GROUPS=${KUT_GROUPS:-its}
KUT_TIMEOUT=${KUT_TIMEOUT:-300}
KUT_MAX_SMP=${KUT_MAX_SMP:-4}
[[ $KUT_GROUPS =~ ^[A-Za-z0-9_-]+([[:space:]]+[A-Za-z0-9_-]+)*$ ]] ||
	die $E_USAGE "KUT_GROUPS='$KUT_GROUPS' is not a list of group names (e.g. 'its gic timer')"
case $KUT_TIMEOUT in '' | *[!0-9]* | 0) die $E_USAGE "KUT_TIMEOUT='$KUT_TIMEOUT' is not a number of seconds" ;; esac
case $KUT_MAX_SMP in '' | *[!0-9]* | 0) die $E_USAGE "KUT_MAX_SMP='$KUT_MAX_SMP' is not a number of vCPUs" ;; esac
KUT_TIMEOUT=$((KUT_TIMEOUT * TIMEOUT_SCALE))

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The guest's plan: PLAN's entries, then EXTRA_TESTS', filtered by TESTS
# and with KSELFTEST_<NAME>_ARGS applied, timeouts times TIMEOUT_SCALE.
PLAN=${PLAN:-$TOP/selftests/plan/kvm.plan}
[ -f "$PLAN" ] && [ -r "$PLAN" ] || die $E_USAGE "PLAN='$PLAN' is not a readable plan file"
entries=()
declare -A planned=() extra=()
while read -r name tmo args; do
	case $name in kvm:*) ;; *) continue ;; esac
	entries+=("$name $tmo $args")
	planned[$name]=1
done <"$PLAN"
IFS=';' read -r -a extras <<<"$(printf '%s' "${EXTRA_TESTS:-}" | tr '\n' ';')"
for e in "${extras[@]}"; do
	read -r name tmo args <<<"$e" || true
	[ -n "$name" ] || continue
	case $name in kvm:*) ;; *) name=kvm:$name ;; esac
	[[ $name =~ ^kvm:[A-Za-z0-9_-]+(@[A-Za-z0-9_-]+)?$ ]] ||
		die $E_USAGE "EXTRA_TESTS entry '$e': '$name' is not a test name (kvm:<test>[@<mode>] [<timeout> [args]], entries separated by ';')"
	tmo=${tmo:-300}
	case $tmo in *[!0-9]* | 0) die $E_USAGE "EXTRA_TESTS entry '$e': timeout '$tmo' is not a number of seconds (kvm:<test>[@<mode>] [<timeout> [args]], entries separated by ';')" ;; esac
	[ -z "${planned[$name]:-}" ] ||
		die $E_USAGE "EXTRA_TESTS: $name is already in the plan ($PLAN or EXTRA_TESTS); other arguments: KSELFTEST_$(echo "${name#kvm:}" | tr 'a-z@-' 'A-Z__')_ARGS, another run: $name@<mode>"
	entries+=("$name $tmo $args")
	planned[$name]=1 extra[$name]=1
done
# The boot's silence limit (scripts/boot.sh's default STALL) against a
# test that may run longer: its output reaches the console as it runs,
# but a test silent for STALL seconds still counts as a hung guest.
if [ "$PROFILE" = default ]; then stall=${STALL:-600}; else stall=${STALL:-1500}; fi
plan=$work/kvm.plan
: >"$plan"
n=0
nextra=0
for ent in "${entries[@]}"; do
	read -r name tmo args <<<"$ent" || true
	if [ -n "${TESTS:-}" ]; then
		hit=
		set -f
		for g in $TESTS; do
			# shellcheck disable=SC2053
			[[ $name == $g ]] && hit=1
		done
		set +f
		[ -n "$hit" ] || continue
	fi
	var=KSELFTEST_$(echo "${name#kvm:}" | tr 'a-z@-' 'A-Z__')_ARGS
	[ -z "${!var+x}" ] || args=${!var}
	tmo=$((tmo * TIMEOUT_SCALE))
	if [ -n "${extra[$name]:-}" ]; then
		t=${name#kvm:}
		t=${t%@*}
		if [ ! -d "$KSFT_OUT/kvm" ]; then
			warn "$name: no $KSFT_OUT/kvm to look for its binary in"
		elif [ ! -x "$KSFT_OUT/kvm/aarch64/$t" ] && [ ! -x "$KSFT_OUT/kvm/$t" ]; then
			die $E_USAGE "EXTRA_TESTS: $name: no test binary $t in $KSFT_OUT/kvm (built by 'make selftests')"
		fi
		[ "$stall" = 0 ] || [ "$tmo" -lt "$stall" ] ||
			warn "$name: timeout ${tmo}s is not below STALL (${stall}s): should it print nothing for ${stall}s, the boot stops as hung; raise STALL"
		nextra=$((nextra + 1))
	fi
	printf '%s %s %s\n' "$name" "$tmo" "$args" >>"$plan"
	n=$((n + 1))
done
if [ "$n" = 0 ]; then
	case " $STAGES " in
	*" kselftest-kvm "* | *" soak "*) die $E_USAGE "TESTS='${TESTS:-}' matches no entry of $PLAN${EXTRA_TESTS:+ or EXTRA_TESTS}" ;;
	esac
fi
if [ "${PLAN_ONLY:-0}" = 1 ]; then
	cat "$plan"
	exit 0
fi
if [ ${#extra[@]} -gt 0 ]; then
	info "EXTRA_TESTS: $nextra of ${#extra[@]} entries in the plan$([ "$nextra" = ${#extra[@]} ] || echo ', the others not matched by TESTS')"
fi
need_cmd cpio gzip "${CROSS_COMPILE}readelf"

[ -f "$IMAGE" ] || die $E_USAGE "no kernel Image at $IMAGE: run 'make build' first"
[ -r "$SKIPLIST" ] || die $E_USAGE "SKIPLIST '$SKIPLIST' not readable"
[ -d "$GUEST_ROOTFS/bin" ] || die $E_USAGE "no guest userland at $GUEST_ROOTFS: run scripts/guest-rootfs.sh (make guest-rootfs)"
for s in $STAGES; do
	[ -x "$TOP/selftests/guest/stage-$s.sh" ] ||
		die $E_USAGE "unknown guest stage '$s' (have: $(cd "$TOP/selftests/guest" && ls stage-*.sh | sed 's/stage-//; s/\.sh//' | tr '\n' ' '))"
done
case " $STAGES " in
*" kselftest-kvm "* | *" kselftest-prereqs "* | *" soak "*) [ -d "$KSFT_OUT/kvm" ] || die $E_USAGE "no selftests in $KSFT_OUT/kvm: run 'make selftests' first" ;;
esac
kut=
case " $STAGES " in
*" kvm-unit-tests "*)
	kut=1
	[ -f "$KUT_OUT/config.mak" ] || [ -f "$KUT_OUT/SKIP" ] ||
		die $E_USAGE "no kvm-unit-tests tree in $KUT_OUT: run 'make kvm-unit-tests' (scripts/kvm-unit-tests.sh) first"
	[ -f "$KUT_OUT/SKIP" ] || [ -d "$GUEST_ROOTFS-kut/opt" ] ||
		die $E_USAGE "no $GUEST_ROOTFS-kut (the kvm-unit-tests harness's tools): run scripts/guest-rootfs.sh (make guest-rootfs)"
	# A test silent for STALL seconds counts as a hung guest; the stage
	# copies a test's log to the console as it grows, but a test can be
	# silent for all of its KUT_TIMEOUT (plus the 60 s of the stage's guard).
	[ "$stall" = 0 ] || [ $((KUT_TIMEOUT + 70)) -lt "$stall" ] ||
		warn "KUT_TIMEOUT ${KUT_TIMEOUT}s plus 70 s is not below STALL (${stall}s): a test silent that long stops the boot as hung; raise STALL"
	;;
esac
for v in L2_GUESTS L2_SMP L2_MEM L2_RUNS L2_TIMEOUT; do
	case ${!v} in
	'' | *[!0-9]*) die $E_USAGE "$v='${!v}' is not a positive integer" ;;
	esac
done

# --- L2 initramfs: busybox, hackbench and its libraries only.
l2=$work/l2root
mkdir -p "$l2"/{bin,usr/bin,etc,proc,sys,dev,tmp}
cp -a "$GUEST_ROOTFS/bin/busybox" "$l2/bin/"
cp -a "$GUEST_ROOTFS/usr/bin/hackbench" "$l2/usr/bin/"
while IFS= read -r f; do
	mkdir -p "$l2/$(dirname "$f")"
	cp -aL "$GUEST_ROOTFS/$f" "$l2/$f"
done < <(elf_closure "$GUEST_ROOTFS" usr/bin/hackbench)
ln -sf busybox "$l2/bin/sh"
install -m 0755 "$TOP/selftests/guest/l2-init.sh" "$l2/init"
printf 'L2_RUNS=%s\nHACKBENCH_ARGS="%s"\n' "$L2_RUNS" "$HACKBENCH_ARGS" >"$l2/etc/l2.env"

# --- L1 root.
root=$work/root
mkdir -p "$root"/{etc/workbench,usr/share/workbench,l2,ksft,proc,sys,dev,tmp}
cp -a "$GUEST_ROOTFS"/. "$root"/
ln -sf busybox "$root/bin/sh"
install -m 0755 "$TOP/selftests/guest/init.sh" "$root/init"
install -m 0755 "$TOP"/selftests/guest/stage-*.sh "$root/usr/share/workbench/"
cp "$IMAGE" "$root/l2/Image"
(cd "$l2" && find . | cpio -o -H newc --quiet | gzip -1) >"$root/l2/initramfs.cpio.gz"
cp "$work/kvm.plan" "$root/etc/workbench/kvm.plan"
echo "$STAGES" >"$root/etc/workbench/stages"
cp "$SKIPLIST" "$root/etc/workbench/skiplist.txt"
cp "$TOP/selftests/flaky.txt" "$root/etc/workbench/flaky.txt"
{
	for v in L2_GUESTS L2_SMP L2_MEM L2_TIMEOUT STREAM_SECONDS KUT_TIMEOUT KUT_MAX_SMP LANE; do echo "$v=${!v}"; done
	printf "KUT_GROUPS='%s'\n" "$KUT_GROUPS"
	# The bench and soak stages' settings, single-quoted for the guest's sh.
	while IFS= read -r v; do
		printf "%s='%s'\n" "$v" "${!v//\'/\'\\\'\'}"
	done < <(compgen -e | grep -E '^(BENCH|SOAK)_[A-Z0-9_]+$' || true)
} >"$root/etc/workbench/env"

case " $STAGES " in
*" kselftest-kvm "* | *" kselftest-prereqs "* | *" soak "*)
	cp -a "$KSFT_OUT/kvm"/. "$root/ksft/kvm/"
	find "$root/ksft" -name '*.o' -o -name '*.d' -o -name '*.a' | xargs -r rm -f
	;;
*" bench "*)
	# The bench stage runs only these selftests.
	mkdir -p "$root/ksft/kvm/aarch64"
	for t in vgic_lpi_stress vmid_isolation vgic_its_mem vgic_its_save_restore vgic_its_collection_walk; do
		[ -x "$KSFT_OUT/kvm/aarch64/$t" ] || die $E_USAGE "no $KSFT_OUT/kvm/aarch64/$t: run 'make selftests' first"
		cp -a "$KSFT_OUT/kvm/aarch64/$t" "$root/ksft/kvm/aarch64/"
	done
	;;
esac

if [ -n "$kut" ]; then
	# The harness's tools (opt/kut-tools/bin, /usr/bin/env, their
	# libraries) over the rootfs, and the tests in /opt/kvm-unit-tests
	# (the path its config.mak names).
	[ -f "$KUT_OUT/SKIP" ] || cp -a "$GUEST_ROOTFS-kut"/. "$root"/
	mkdir -p "$root/opt/kvm-unit-tests"
	cp -a "$KUT_OUT"/. "$root/opt/kvm-unit-tests/"
fi

mkdir -p "$(dirname "$OUT")"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
kutinfo=
if [ -n "$kut" ] && [ -f "$KUT_OUT/SKIP" ]; then
	kutinfo=", kvm-unit-tests: SKIP ($(head -n1 "$KUT_OUT/SKIP"))"
elif [ -n "$kut" ]; then
	kutinfo=", kvm-unit-tests $(cat "$KUT_OUT/build-head" 2>/dev/null) groups '$KUT_GROUPS' (${KUT_TIMEOUT}s per test, $KUT_MAX_SMP vCPUs)"
fi
info "$OUT: $(du -h "$OUT" | cut -f1), stages: $STAGES, $n planned selftests, $L2_GUESTS L2 guests$kutinfo"
info "PASS in $(elapsed)"
