#!/bin/sh
# Stage "kselftest-prereqs": the series' selftests require what they need
# of the machine and leave its setup to the machine. init.sh prepares it;
# here each prerequisite is taken away in turn (and given back), and each
# test that needs it must exit with KSFT_SKIP (4) and say what is
# missing, instead of setting it up itself, failing or passing.
#   vgic_its_mem         cgroup2 mounted, +memory in the root's subtree_control
#   vgic_its_fail_nth    fault injection set up to fail sleeping allocations;
#                        debugfs
#   vgic_its_cache       tracefs (the cache tracepoints)
#   vgic_its_save_restore  tracefs (on a kernel with the cache tracepoints)
#   vgic_its_vlpi        QEMU's edu device bound to vfio-pci (the main boot's
#                        machine has none), then debugfs
# A test binary missing from this guest (a TESTS filter) is a SKIP here.
ksft=${WB_KSFT:-/ksft/kvm}
dbg=/sys/kernel/debug
tmp=${WB_TMP:-/tmp}
n=0
failed=
echo "KTAP version 1"
echo "1..9"

# expect_skip NAME WHY-REGEX TEST [ARGS]: TEST must exit 4, its output
# matching WHY-REGEX.
expect_skip() {
	_name=$1 _re=$2 _t=$3
	shift 3
	n=$((n + 1))
	if [ ! -x "$ksft/aarch64/$_t" ]; then
		echo "ok $n $_name # SKIP no $_t in this guest"
		return
	fi
	(cd "$ksft/aarch64" && ./"$_t" "$@") >"$tmp/prereq.out" 2>&1
	_rc=$?
	if [ "$_rc" = 4 ] && grep -Eq "$_re" "$tmp/prereq.out"; then
		echo "ok $n $_name # $_t skipped: $(grep -E -m1 "$_re" "$tmp/prereq.out" | sed 's/.*SKIP *//; s/^- //')"
	else
		echo "not ok $n $_name # $_t exit=$_rc, expected 4 and /$_re/"
		tail -n 15 "$tmp/prereq.out" | sed 's/^/# /'
		failed=1
	fi
}

tracefs_off() {
	umount /sys/kernel/tracing 2>/dev/null
	umount $dbg/tracing 2>/dev/null
	! grep -q ' tracefs ' /proc/mounts || echo "# tracefs is still mounted: $(grep ' tracefs ' /proc/mounts)"
}
tracefs_on() { mount -t tracefs tracefs /sys/kernel/tracing; }

# cgroup2: not mounted, then mounted without the memory controller for
# the root's children.
umount /sys/fs/cgroup
! grep -q ' cgroup2 ' /proc/mounts || echo "# cgroup2 is still mounted"
expect_skip mem-no-cgroup2 'SKIP.*cgroup2 is not mounted' vgic_its_mem
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo -memory >/sys/fs/cgroup/cgroup.subtree_control
expect_skip mem-no-memory-controller 'SKIP.*memory controller is not enabled' vgic_its_mem
echo +memory >/sys/fs/cgroup/cgroup.subtree_control

# Fault injection left at its defaults for sleeping allocations.
echo Y >$dbg/failslab/ignore-gfp-wait
expect_skip fail-nth-not-set-up 'SKIP.*fault injection is not set up.*ignore-gfp-wait is Y, needs N' vgic_its_fail_nth
echo N >$dbg/failslab/ignore-gfp-wait

# No tracefs: every other check of these two runs first.
tracefs_off
expect_skip cache-no-tracefs 'SKIP.*tracefs is not mounted' vgic_its_cache
expect_skip save-restore-no-tracefs 'SKIP.*tracefs is not mounted' vgic_its_save_restore
# No debugfs at all (nor the tracefs below it).
umount $dbg
! grep -q ' debugfs ' /proc/mounts || echo "# debugfs is still mounted"
expect_skip fail-nth-no-debugfs 'SKIP.*(needs CONFIG_FAILSLAB and debugfs)' vgic_its_fail_nth
mount -t debugfs debugfs $dbg
tracefs_on
# No device to assign: this machine has no edu device.
expect_skip vlpi-no-device 'SKIP.*no QEMU edu device \(1234:11e8\) bound to vfio-pci' vgic_its_vlpi

# Nothing left behind by the tests, in this stage or the ones before: no
# cgroup and no trace instance of theirs.
n=$((n + 1))
left=$(ls -d /sys/fs/cgroup/vgic_its_* /sys/kernel/tracing/instances/vgic_its_* \
	/sys/kernel/tracing/instances/vmid_isolation* 2>/dev/null)
if [ -z "$left" ]; then
	echo "ok $n nothing-left-behind"
else
	echo "not ok $n nothing-left-behind # $(echo $left)"
	failed=1
fi

# Given back: what init.sh set up is there again.
n=$((n + 1))
if grep -qw memory /sys/fs/cgroup/cgroup.subtree_control &&
	[ "$(cat $dbg/failslab/ignore-gfp-wait)" = N ] && [ -d /sys/kernel/tracing/instances ]; then
	echo "ok $n setup-restored"
else
	echo "not ok $n setup-restored # cgroup2 +memory, failslab or tracefs not as init.sh left them"
	failed=1
fi
[ -z "$failed" ]
