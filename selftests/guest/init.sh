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
