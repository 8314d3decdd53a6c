#!/bin/sh
# /init of each nested (L2) guest: run hackbench L2_RUNS times, print each
# "Time:" line and the sentinel "L2-END rc=<n>", power off (or, with
# workbench.l2_hold=1 on the command line, idle until killed). Settings
# come from /etc/l2.env (baked in by scripts/initramfs.sh).
export PATH=/usr/bin:/bin
/bin/busybox --install -s /bin 2>/dev/null
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
echo 4 >/proc/sys/kernel/printk
. /etc/l2.env
rc=0
i=1
while [ "$i" -le "$L2_RUNS" ]; do
	t=$(hackbench $HACKBENCH_ARGS 2>&1 | tee /tmp/hb | grep '^Time:')
	if [ -z "$t" ]; then
		sed 's/^/L2-ERR /' /tmp/hb
		rc=2
		break
	fi
	echo "L2-HACKBENCH run=$i $t"
	i=$((i + 1))
done
echo "L2-END rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
# The bench stage reads this VM's KVM counters after L2-END, then stops
# its QEMU: hold the VM (idle) until then.
case " $(cat /proc/cmdline) " in
*" workbench.l2_hold=1 "*) while :; do sleep 3600; done ;;
esac
poweroff -f
