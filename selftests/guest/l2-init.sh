#!/bin/sh
# /init of each nested (L2) guest: run hackbench L2_RUNS times, print each
# "Time:" line and the sentinel "L2-END rc=<n>", power off. Settings come
# from /etc/l2.env (baked in by scripts/initramfs.sh).
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
poweroff -f
