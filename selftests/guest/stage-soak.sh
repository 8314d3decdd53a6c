#!/bin/sh
# Stage "soak" (make soak): for SOAK_DURATION seconds, loop the
# stress that the series must survive: VMID isolation (16 VMs; under the
# soak's 4-bit VMIDs, rollovers all the time), the vgic-its churn test
# (MSIs racing DISCARD/MAPTI, stale translations checked) and nested
# guests running hackbench, and the model-based ITS test
# (vgic_its_model: seeded random ITS command sequences checked against a
# reference of the architecture) for SOAK_MODEL_STEP commands per
# iteration. The loop goes on past SOAK_DURATION until the model has run
# SOAK_MODEL_COMMANDS commands in all (10^7; 0: no model). Each iteration
# prints one line; any failure, or fewer model commands than asked, fails
# the stage (the host also fails on any splat in the console).
. /etc/workbench/env
D=${SOAK_DURATION:-3600}
K=/ksft/kvm/aarch64
T=${SOAK_TEST_TIMEOUT:-900}
MC=${SOAK_MODEL_COMMANDS:-10000000}
MS=${SOAK_MODEL_STEP:-100000}
# a model step at no less than 50 commands per second
TM=$((MS / 50 + 300))
echo "KTAP version 1"
echo "1..1"
now() { cut -d. -f1 /proc/uptime; }
end=$(($(now) + D))
i=0
bad=0
model=0
model_stop=
# one NAME CMD...: run a step with a timeout, keep its output if it fails.
one() {
	name=$1
	shift
	timeout -k 10 "${to:-$T}" "$@" >/tmp/soak.out 2>&1
	r=$?
	if [ "$r" != 0 ]; then
		echo "# iteration $i: $name failed (exit=$r)"
		tail -n 30 /tmp/soak.out | sed 's/^/# /'
		bad=$((bad + 1))
	fi
	eval "rc_$name=$r"
}
more_model() { [ -z "$model_stop" ] && [ "$model" -lt "$MC" ]; }
start=$(now)
while [ "$(now)" -lt "$end" ] || more_model; do
	i=$((i + 1))
	rc_isolation=- rc_churn=- rc_nested=- rc_model=- rolls=
	# past DURATION, only the model's remaining commands
	if [ "$(now)" -lt "$end" ]; then
		one isolation "$K/vmid_isolation" -n 16 -d 10
		rolls=$(sed -n 's/.*, \([0-9]*\) VMID rollovers.*/\1/p' /tmp/soak.out)
		# -w: hold each unmapped window up to 1 s for an MSI to check
		# (10 ms by default): the debug kernel's senders are slow
		one churn "$K/vgic_lpi_stress" -c -v 2 -d 2 -e 16 -i 300 -w 1000
		one nested /usr/share/workbench/stage-nested-hackbench.sh
	fi
	if more_model; then
		n=$((MC - model))
		[ "$n" -le "$MS" ] || n=$MS
		to=$TM one model "$K/vgic_its_model" -N "$n" -t 0
		to=
		# "<v> VMs, <n> commands in <b> batches, ..."
		done_n=$(sed -n 's/^[0-9]* VMs, \([0-9]*\) commands in .*/\1/p' /tmp/soak.out | tail -n 1)
		if [ "$rc_model" = 0 ] && [ -n "$done_n" ] && [ "$done_n" -gt 0 ]; then
			model=$((model + done_n))
		elif [ "$rc_model" = 0 ]; then
			echo "# iteration $i: vgic_its_model printed no command count"
			bad=$((bad + 1))
			model_stop=1
		else
			model_stop=1 # failed (counted by one): no more model runs
		fi
	fi
	echo "# soak iteration $i at $(now)s: vmid_isolation=$rc_isolation (${rolls:-?} VMID rollovers) churn=$rc_churn nested=$rc_nested model=$rc_model ($model commands)"
done
secs=$(($(now) - start))
echo "SOAK iterations=$i failures=$bad seconds=$secs duration=$D model_commands=$model"
if [ "$bad" = 0 ] && [ "$i" -gt 0 ]; then
	echo "ok 1 soak # $i iterations in ${secs}s, $model model commands, no failure"
	exit 0
fi
echo "not ok 1 soak # $bad failure(s) in $i iterations"
exit 1
