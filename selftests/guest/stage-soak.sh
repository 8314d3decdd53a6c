#!/bin/sh
# Stage "soak" (make soak): for SOAK_DURATION seconds, loop the
# stress that the series must survive: VMID isolation (16 VMs; under the
# soak's 4-bit VMIDs, rollovers all the time), the vgic-its churn test
# (MSIs racing DISCARD/MAPTI, stale translations checked) and nested
# guests running hackbench. Each iteration prints one line; any failure
# fails the stage (the host also fails on any splat in the console).
. /etc/workbench/env
D=${SOAK_DURATION:-3600}
K=/ksft/kvm/aarch64
T=${SOAK_TEST_TIMEOUT:-900}
echo "KTAP version 1"
echo "1..1"
now() { cut -d. -f1 /proc/uptime; }
end=$(($(now) + D))
i=0
bad=0
# one NAME CMD...: run a step with a timeout, keep its output if it fails.
one() {
	name=$1
	shift
	timeout -k 10 "$T" "$@" >/tmp/soak.out 2>&1
	r=$?
	if [ "$r" != 0 ]; then
		echo "# iteration $i: $name failed (exit=$r)"
		tail -n 30 /tmp/soak.out | sed 's/^/# /'
		bad=$((bad + 1))
	fi
	eval "rc_$name=$r"
}
while [ "$(now)" -lt "$end" ]; do
	i=$((i + 1))
	one isolation "$K/vmid_isolation" -n 16 -d 10
	rolls=$(sed -n 's/.*, \([0-9]*\) VMID rollovers.*/\1/p' /tmp/soak.out)
	one churn "$K/vgic_lpi_stress" -c -v 2 -d 2 -e 16 -i 300
	one nested /usr/share/workbench/stage-nested-hackbench.sh
	echo "# soak iteration $i at $(now)s: vmid_isolation=$rc_isolation (${rolls:-?} VMID rollovers) churn=$rc_churn nested=$rc_nested"
done
echo "SOAK iterations=$i failures=$bad seconds=$D"
if [ "$bad" = 0 ] && [ "$i" -gt 0 ]; then
	echo "ok 1 soak # $i iterations in ${D}s, no failure"
	exit 0
fi
echo "not ok 1 soak # $bad failure(s) in $i iterations"
exit 1
