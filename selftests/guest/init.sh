#!/bin/sh
# /init of the L1 test guest (busybox). Runs the stages named in
# /etc/workbench/stages, prints their TAP between WORKBENCH markers on the
# console, and ends with the sentinel "WORKBENCH-END rc=<n>", which the host
# (scripts/boot.sh) turns into its exit code. Anything else (panic, hang)
# never prints the sentinel.
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
/bin/busybox --install -s /bin 2>/dev/null
mkdir -p /proc /sys /dev /tmp /run
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/hugepages
mount -t hugetlbfs hugetlbfs /dev/hugepages 2>/dev/null
# What the series' selftests require of the machine and check for (they
# skip, naming what is missing, rather than set it up themselves):
# tracefs for the kvm:vgic_its_cache_* and kmem events; cgroup2 with the
# memory controller enabled for the root's children (vgic_its_mem);
# failslab and fail_page_alloc failing sleeping and order-0 allocations,
# quietly, for /proc/thread-self/fail-nth (vgic_its_fail_nth). A skip in
# the workbench's own configuration fails the stage.
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null &&
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
for kv in failslab/ignore-gfp-wait=N failslab/cache-filter=N failslab/verbose=0 \
	fail_page_alloc/ignore-gfp-wait=N fail_page_alloc/ignore-gfp-highmem=N \
	fail_page_alloc/min-order=0 fail_page_alloc/verbose=0; do
	[ ! -e "/sys/kernel/debug/${kv%=*}" ] || echo "${kv#*=}" >"/sys/kernel/debug/${kv%=*}"
done
# QEMU's edu devices (PCI 1234:11e8; the gicv4 lane's machine has one) go
# to vfio-pci, for vgic_its_vlpi.
if [ -e /sys/bus/pci/drivers/vfio-pci/new_id ] &&
	grep -q -x 0x11e8 /sys/bus/pci/devices/*/device 2>/dev/null; then
	echo 1234 11e8 >/sys/bus/pci/drivers/vfio-pci/new_id
fi
# Keep the console for test output: only warnings and worse from now on
# (splats still show; KUnit has already printed its KTAP during boot).
echo 4 >/proc/sys/kernel/printk

# Fault injection for the workbench's own tests (scripts/workbench-selftest.sh):
# prove that a panic and a hang are reported as such by the host.
case " $(cat /proc/cmdline) " in
*" workbench.fault=panic "*) echo c >/proc/sysrq-trigger ;;
*" workbench.fault=hang "*) while :; do sleep 3600; done ;;
esac

rc=0
. /etc/workbench/env
echo "WORKBENCH-BEGIN $(uname -r) $(nproc) cpus"
for s in $(cat /etc/workbench/stages); do
	echo "WORKBENCH-STAGE-BEGIN $s"
	start=$(cut -d. -f1 /proc/uptime)
	/usr/share/workbench/stage-$s.sh
	src=$?
	end=$(cut -d. -f1 /proc/uptime)
	echo "WORKBENCH-STAGE-END $s rc=$src seconds=$((end - start))"
	[ $src -eq 0 ] || rc=2
done
sync
echo "WORKBENCH-END rc=$rc"
poweroff -f
