#!/bin/sh
# Stage "nested-hackbench": start L2_GUESTS nested guests at once (QEMU with
# -accel kvm on the L1 KVM, same kernel Image), each running hackbench, and
# check that every one printed its "L2-END rc=0" sentinel in time.
# The L2 kernels keep the lockup detectors and their panics, with
# watchdog_thresh=60 (soft lockup after 120 s, hard lockup after 60 s): an
# L2 vCPU runs under two levels of emulation, and at the default 10 s a
# busy host alone makes an L2 debug kernel panic while it prints its boot
# log.
. /etc/workbench/env
n=${L2_GUESTS:-2}
echo "KTAP version 1"
echo "1..$n"
i=1
while [ "$i" -le "$n" ]; do
	/usr/bin/timeout -k 5 "${L2_TIMEOUT:-300}" qemu-system-aarch64 -M virt,gic-version=3 -accel kvm -cpu host \
		-smp "${L2_SMP:-2}" -m "${L2_MEM:-256}" -nodefaults -nographic -no-reboot -nic none \
		-serial stdio -kernel /l2/Image -initrd /l2/initramfs.cpio.gz \
		-append "console=ttyAMA0 panic=-1 watchdog_thresh=60 rdinit=/init" </dev/null >/tmp/l2-$i.log 2>&1 &
	echo $! >/tmp/l2-$i.pid
	i=$((i + 1))
done
fail=0
i=1
while [ "$i" -le "$n" ]; do
	wait "$(cat /tmp/l2-$i.pid)"
	r=$?
	if grep -q '^L2-END rc=0' /tmp/l2-$i.log; then
		grep '^L2-HACKBENCH\|^L2-END' /tmp/l2-$i.log | sed "s/^/# guest $i: /"
		echo "ok $i l2-guest-$i"
	else
		# The cause first (it may be far above the last 40 lines).
		grep -E -m 5 'watchdog: |Kernel panic|BUG: |Oops|rcu: INFO' /tmp/l2-$i.log |
			sed "s/^/# guest $i (cause): /"
		sed "s/^/# guest $i: /" /tmp/l2-$i.log | tail -n 40
		if [ "$r" = 124 ] || [ "$r" = 137 ] || [ "$r" = 143 ]; then
			echo "not ok $i l2-guest-$i # TIMEOUT ${L2_TIMEOUT:-300} seconds"
		else
			echo "not ok $i l2-guest-$i # exit=$r, no L2-END rc=0 sentinel"
		fi
		fail=1
	fi
	i=$((i + 1))
done
[ "$fail" = 0 ]
