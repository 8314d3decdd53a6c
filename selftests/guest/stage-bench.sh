#!/bin/sh
# Stage "bench" (make bench only, never part of make check): the scenarios
# of scripts/bench.sh, run in the L1 guest. Prints one machine-parsable line
# per measurement and one TAP line per scenario:
#
#   BENCH <scenario> <key>=<value> ...      (read by scripts/bench-report.py)
#   ok <n> bench-<scenario>                 (not ok: the figure is missing)
#
# Sizes: BENCH_* from /etc/workbench/env (written by scripts/initramfs.sh
# from scripts/bench.sh's settings; the defaults below are bench.sh's full
# mode). Which scenarios: the kernel command line, so that one initramfs
# serves several boots:
#   workbench.bench=hackbench_l1,nested_rollover,lpi,exit_cost,its   (default: all)
#   kvm-arm.vmid_bits=N   (patched kernel only) the nested scenario is then
#                         reported as nested_rollover_vmidN, and fails when
#                         the kernel did not apply the limit
#
# hackbench_l1     hackbench -s 512 -l LOOPS -g GROUPS -f 25 -P in L1, RUNS
#                  times: "BENCH hackbench_l1 seconds=<its Time:> run=<i>"
# nested_rollover  L2_GUESTS nested guests at once (L2_SMP vCPUs, same
#                  Image), each running hackbench L2_RUNS times (settings
#                  baked into the L2 initramfs), then holding idle
#                  (workbench.l2_hold=1) until this script has read its KVM
#                  counters and stopped its QEMU:
#                  "BENCH nested_rollover seconds=<first start to last
#                  L2-END, L1 uptime> exits=<sum over guests> guests=<n>
#                  rollovers=<VMID rollovers | NA>"
#   exits: the VM's debugfs directory /sys/kernel/debug/kvm/<pid>-<fd>/
#   (<pid>: the QEMU process, from -pidfile) holds each vCPU counter summed
#   over the VM's vCPUs; it is removed when the VM is destroyed, which is
#   why each guest is held after L2-END: the value read is the VM's total
#   from creation to the end of its workload (+ the few ms until read).
#   The aggregate /sys/kernel/debug/kvm/exits only sums live VMs.
#   rollovers: trace event asid/asid_rollover with filter name == "vmid"
#   (the series' tracepoint; absent on stock: NA), counted as the events in
#   the trace buffer plus the per-CPU overruns.
# lpi              vgic_lpi_stress for each ';'-separated argument list of
#                  BENCH_LPI_CONFIGS: "BENCH lpi_v<V>d<D>e<E> lpis_per_s=<its
#                  Rate:>" (or seconds=<wall> if it prints no rate); then,
#                  when its -h output lists them, the churn (-c) and
#                  miss-cost (-m) modes, whose "Churn rate: ..." and "Miss
#                  cost, ..." lines become "BENCH lpi_churn ..." and "BENCH
#                  lpi_miss devices=D ..." (to_bench)
#                  (churn once per E of BENCH_LPI_CHURN_EVENTS, with -e E,
#                  its line given "events=E", and, when -h lists -k, the
#                  control "BENCH lpi_churn_control events=E ...": the
#                  same run with INV+SYNC in place of each remap, so that
#                  nothing is invalidated); and "BENCH lpi_warm events=E
#                  lpis_per_s=<Rate:>": stress mode with the largest E and
#                  BENCH_LPI_WARM_ARGS (the same translations, nothing
#                  remapped, the LPIs left pending).
# its              the ITS's memory and whole-ITS latencies:
#                  vgic_its_mem BENCH_ITS_MEM_ARGS (-m): its "<layout>
#                  layout, ..." lines become "BENCH its_mem ..." (kernel
#                  memory per mapped event, sparse and dense layouts,
#                  uncached and cached) and "BENCH its_walk ..." (the
#                  operations that walk or free the whole ITS) (to_bench);
#                  vgic_its_collection_walk: "BENCH
#                  its_collection_walk op=mapc|baser time_us=<the MMIO
#                  write> sync_queue_us=<32767 SYNCs>"; then
#                  vgic_its_save_restore -s -n N
#                  for each N of BENCH_ITS_RESTORE_DEVICES (16 EventID bits)
#                  and -n BENCH_ITS_RESTORE_BITS_DEVICES -b B for each B of
#                  BENCH_ITS_RESTORE_BITS: "BENCH its_restore devices=N
#                  bits=B ms=<its restore: time_ms>" (the test checks that
#                  the restored tables save back entry for entry)
# its_large        vgic_its_save_restore -s -n N for each N of
#                  BENCH_ITS_RESTORE_LARGE (16 EventID bits), for the patched
#                  kernel only (stock + fix needs minutes per size):
#                  "BENCH its_restore_large devices=N bits=16 ms=<time_ms>"
# exit_cost        the cost of a guest exit round trip,
#                  which loads the vCPU again and so runs the VMID fast path,
#                  with 1, 2 and 4 VMs of one vCPU each at once (the L1
#                  guest has 2 CPUs): vmid_isolation -n N -d SECONDS -i 1
#                  (one guest read between two exits to userspace; -r 0: no
#                  rollover floor, there is no clamp):
#                  "BENCH exit_cost vms=N ns_per_exit=<per VM: SECONDS /
#                  its round trips> exits=<all VMs' round trips>"
#
# A run that fails prints its output as "# " comments and "not ok"; BENCH
# lines of a failed run are commented out ("# failed-run: BENCH ...") so the
# report never uses them. WB_ROOT (unset in the guest) prefixes every
# absolute path: it lets this script be exercised on a host with stubs.
R=${WB_ROOT:-}
T=$R/tmp
# shellcheck disable=SC1091
. "$R/etc/workbench/env"

BENCH_HB_L1_GROUPS=${BENCH_HB_L1_GROUPS:-10}
BENCH_HB_L1_LOOPS=${BENCH_HB_L1_LOOPS:-40}
BENCH_HB_L1_RUNS=${BENCH_HB_L1_RUNS:-3}
BENCH_LPI_CONFIGS=${BENCH_LPI_CONFIGS:--v 1 -d 1 -e 1 -i 200000;-v 2 -d 2 -e 16 -i 8000;-v 2 -d 2 -e 17 -i 8000;-v 2 -d 4 -e 1 -i 60000;-v 1 -d 1 -e 17 -i 12000}
BENCH_LPI_CHURN_ARGS=${BENCH_LPI_CHURN_ARGS:--c -v 2 -d 2 -i 2000 -r 200 -w 1}
BENCH_LPI_CHURN_EVENTS=${BENCH_LPI_CHURN_EVENTS:-256 1024}
BENCH_LPI_WARM_ARGS=${BENCH_LPI_WARM_ARGS:--v 2 -d 2 -i 60}
BENCH_EXIT_VMS=${BENCH_EXIT_VMS:-1 2 4}
BENCH_EXIT_SECONDS=${BENCH_EXIT_SECONDS:-5}
BENCH_LPI_MISS_ARGS=${BENCH_LPI_MISS_ARGS:--m -v 1}
BENCH_LPI_MISS_DEVICES=${BENCH_LPI_MISS_DEVICES:-1 1024}
BENCH_LPI_TIMEOUT=${BENCH_LPI_TIMEOUT:-300}
BENCH_ITS_MEM_ARGS=${BENCH_ITS_MEM_ARGS:--m}
BENCH_ITS_RESTORE_DEVICES=${BENCH_ITS_RESTORE_DEVICES:-256 512 1024 2048}
BENCH_ITS_RESTORE_BITS=${BENCH_ITS_RESTORE_BITS:-8 12}
BENCH_ITS_RESTORE_BITS_DEVICES=${BENCH_ITS_RESTORE_BITS_DEVICES:-2048}
BENCH_ITS_RESTORE_LARGE=${BENCH_ITS_RESTORE_LARGE:-8192 32768}
BENCH_ITS_TIMEOUT=${BENCH_ITS_TIMEOUT:-1200}
L2_GUESTS=${L2_GUESTS:-8}
L2_SMP=${L2_SMP:-2}
L2_MEM=${L2_MEM:-256}
L2_TIMEOUT=${L2_TIMEOUT:-900}
DBG=$R/sys/kernel/debug
LPI_BIN=$R/ksft/kvm/aarch64/vgic_lpi_stress
ISO_BIN=$R/ksft/kvm/aarch64/vmid_isolation
MEM_BIN=$R/ksft/kvm/aarch64/vgic_its_mem
SR_BIN=$R/ksft/kvm/aarch64/vgic_its_save_restore
WALK_BIN=$R/ksft/kvm/aarch64/vgic_its_collection_walk

cmdline=" $(cat "$R/proc/cmdline") "
want=hackbench_l1,nested_rollover,lpi,exit_cost,its
case $cmdline in
*" workbench.bench="*)
	want=${cmdline##* workbench.bench=}
	want=${want%% *}
	;;
esac
vmid_bits=
case $cmdline in
*" kvm-arm.vmid_bits="*)
	vmid_bits=${cmdline##* kvm-arm.vmid_bits=}
	vmid_bits=${vmid_bits%% *}
	;;
esac

isnum() {
	case $1 in '' | . | *[!0-9.]* | *.*.*) return 1 ;; esac
	return 0
}
wanted() {
	case ",$want," in *",$1,"*) return 0 ;; esac
	return 1
}
uptime_now() {
	read -r _up _ <"$R/proc/uptime"
	echo "$_up"
}
# fsub A B: A - B with two decimals
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

tapn=0
failed=0
tap() { # tap NAME [FAILURE-REASON]
	tapn=$((tapn + 1))
	if [ -z "${2:-}" ]; then
		echo "ok $tapn bench-$1"
	else
		echo "not ok $tapn bench-$1 # $2"
		failed=1
	fi
}
tap_skip() {
	tapn=$((tapn + 1))
	echo "ok $tapn bench-$1 # SKIP $2"
}
# comment FILE: a failed run's output, as TAP comments, BENCH lines disarmed
comment() { sed 's/^BENCH /failed-run: BENCH /; s/^/# /' "$1" | tail -n 40; }

# lpi_name ARGS...: v<V>d<D>e<E> from vgic_lpi_stress's -v -d -e
lpi_name() {
	_v=x _d=x _e=x
	while [ $# -ge 2 ]; do
		case $1 in
		-v) _v=$2 ;;
		-d) _d=$2 ;;
		-e) _e=$2 ;;
		esac
		shift
	done
	echo "v${_v}d${_d}e${_e}"
}

# ---- hackbench_l1
sc_hackbench_l1() {
	args="-s 512 -l $BENCH_HB_L1_LOOPS -g $BENCH_HB_L1_GROUPS -f 25 -P"
	echo "# hackbench_l1: command: hackbench $args ($BENCH_HB_L1_RUNS runs)"
	i=1
	why=
	while [ "$i" -le "$BENCH_HB_L1_RUNS" ]; do
		# shellcheck disable=SC2086
		hackbench $args >"$T/hb.out" 2>&1
		r=$?
		t=$(grep -m1 '^Time:' "$T/hb.out" | { read -r _ v _ && echo "$v"; })
		if [ "$r" != 0 ] || ! isnum "$t"; then
			comment "$T/hb.out"
			why="run $i: exit=$r, Time: '$t'"
			break
		fi
		echo "BENCH hackbench_l1 seconds=$t run=$i"
		i=$((i + 1))
	done
	tap hackbench_l1 "$why"
}

# ---- nested_rollover
tracefs() {
	if [ -d "$R/sys/kernel/tracing/events" ]; then
		echo "$R/sys/kernel/tracing"
	elif [ -z "$R" ] && mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null &&
		[ -d /sys/kernel/tracing/events ]; then
		echo /sys/kernel/tracing
	elif [ -d "$DBG/tracing/events" ]; then
		echo "$DBG/tracing"
	fi
}

# l2_reader I: copy guest I's console to its log; at its L2-END line, record
# the L1 uptime and the VM's exit count, then stop its QEMU. Shell builtins
# only per line (no fork), so reading does not load the guest CPUs.
l2_reader() {
	_i=$1
	: >"$T/bl2-$_i.log"
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$T/bl2-$_i.log"
		case $line in
		L2-END*)
			_end=$(uptime_now)
			_qpid=
			[ -r "$T/bl2-$_i.pid" ] && read -r _qpid <"$T/bl2-$_i.pid"
			_ex=
			if [ -n "$_qpid" ]; then
				for _f in "$DBG/kvm/$_qpid"-*/exits; do
					[ -r "$_f" ] || continue
					read -r _v <"$_f"
					_ex=$((${_ex:-0} + _v))
				done
			fi
			printf 'end=%s\nexits_i=%s\n' "$_end" "${_ex:-NA}" >"$T/bl2-$_i.end"
			[ -n "$_qpid" ] && kill "$_qpid" 2>/dev/null
			;;
		esac
	done
}

sc_nested_rollover() {
	name=nested_rollover
	if [ -n "$vmid_bits" ]; then
		name=nested_rollover_vmid$vmid_bits
		if ! dmesg | grep -q "VMID: limited to $vmid_bits bits"; then
			dmesg | grep -i 'vmid' | sed 's/^/# /'
			tap "$name" "kvm-arm.vmid_bits=$vmid_bits did not take effect (stock kernel, or no CONFIG_ARM64_DEBUG_ASID_BITS)"
			return
		fi
	fi
	dmesg | grep -E 'VMID|kvm \[1\]: .*mode' | sed 's/^/# dmesg: /'
	ev=
	tr=$(tracefs)
	if [ -n "$tr" ] && [ -d "$tr/events/asid/asid_rollover" ]; then
		ev=$tr/events/asid/asid_rollover
		echo 0 >"$tr/tracing_on"
		echo 0 >"$ev/enable"
		: >"$tr/trace"
		echo 'name == "vmid"' >"$ev/filter"
		case $(cat "$ev/filter") in
		*vmid*)
			echo 1 >"$ev/enable"
			echo 1 >"$tr/tracing_on"
			;;
		*)
			echo "# the filter name == \"vmid\" was not accepted: rollovers=NA"
			ev=
			;;
		esac
	else
		echo "# no trace event asid/asid_rollover (none in a stock kernel): rollovers=NA"
	fi
	append="console=ttyAMA0 panic=-1 rdinit=/init quiet workbench.l2_hold=1"
	echo "# $name: $L2_GUESTS guests at once, each: qemu-system-aarch64 -M virt,gic-version=3 -accel kvm -cpu host -smp $L2_SMP -m $L2_MEM -nodefaults -nographic -no-reboot -nic none -serial stdio -kernel /l2/Image -initrd /l2/initramfs.cpio.gz -pidfile /tmp/bl2-<i>.pid -append '$append' (timeout ${L2_TIMEOUT}s)"
	echo "# each guest runs: hackbench ${BENCH_L2_HACKBENCH_ARGS:-(see HACKBENCH_ARGS)} ${BENCH_L2_RUNS:-L2_RUNS} times (baked into /l2/initramfs.cpio.gz)"
	t0=$(uptime_now)
	i=1
	while [ "$i" -le "$L2_GUESTS" ]; do
		rm -f "$T/bl2-$i.pid" "$T/bl2-$i.end" "$T/bl2-$i.log"
		timeout -k 5 "$L2_TIMEOUT" qemu-system-aarch64 -M virt,gic-version=3 -accel kvm -cpu host \
			-smp "$L2_SMP" -m "$L2_MEM" -nodefaults -nographic -no-reboot -nic none \
			-serial stdio -kernel "$R/l2/Image" -initrd "$R/l2/initramfs.cpio.gz" \
			-pidfile "$T/bl2-$i.pid" -append "$append" </dev/null 2>&1 | l2_reader "$i" &
		i=$((i + 1))
	done
	wait
	if [ -n "$ev" ]; then
		echo 0 >"$ev/enable"
		echo 0 >"$ev/filter"
		n=$(grep -vc '^#' "$tr/trace")
		ov=0
		for s in "$tr"/per_cpu/cpu*/stats; do
			[ -r "$s" ] || continue
			o=$(grep '^overrun:' "$s" | { read -r _ v && echo "$v"; })
			ov=$((ov + ${o:-0}))
		done
		rollovers=$((n + ov))
		[ "$ov" = 0 ] || echo "# trace buffer overran: $ov events lost from the buffer, counted"
	else
		rollovers=NA
	fi
	why=
	ends=
	exits=0
	i=1
	while [ "$i" -le "$L2_GUESTS" ]; do
		end=
		exits_i=NA
		if [ -r "$T/bl2-$i.end" ]; then
			# shellcheck disable=SC1090
			. "$T/bl2-$i.end"
		fi
		ex=$exits_i
		if [ -n "$end" ] && grep -q '^L2-END rc=0' "$T/bl2-$i.log"; then
			grep '^L2-HACKBENCH\|^L2-END' "$T/bl2-$i.log" | sed "s/^/# guest $i: /"
			echo "# guest $i: L1 uptime at L2-END $end (start $t0), exits $ex"
			ends="$ends $end"
			if [ "$ex" = NA ] || [ "$exits" = NA ]; then exits=NA; else exits=$((exits + ex)); fi
		else
			sed "s/^/# guest $i: /" "$T/bl2-$i.log" | tail -n 30
			why="${why:+$why; }guest $i: no L2-END rc=0"
		fi
		i=$((i + 1))
	done
	if [ -n "$why" ]; then
		tap "$name" "$why"
		return
	fi
	last=$(echo "$ends" | awk '{ m = $1; for (i = 2; i <= NF; i++) if ($i > m) m = $i; print m }')
	echo "BENCH $name seconds=$(fsub "$last" "$t0") exits=$exits guests=$L2_GUESTS rollovers=$rollovers"
	[ "$exits" != NA ] || echo "# exits=NA: no /sys/kernel/debug/kvm/<qemu pid>-*/exits for some guest"
	tap "$name"
}

# ---- lpi
# to_bench FILE: append to FILE the BENCH lines of the figures that the
# selftests print as plain sentences (vgic_lpi_stress -c and -m,
# vgic_its_mem -m): the tests' output is theirs, this reading of it the
# workbench's. Returns 0.
to_bench() {
	_n='([0-9]+)' _f='([0-9.]+)' _s='(-?[0-9]+)'
	_lay="^ *([a-z]+) layout, $_n devices x $_n events"
	sed -n -E \
		-e "s/^Churn rate: $_f MSIs\/s sent, $_f LPIs\/s taken, $_f remaps\/s\$/BENCH lpi_churn lpis_per_s=\1 taken_per_s=\2 churn_per_s=\3/p" \
		-e "s/^Churn rate \(control\): $_f MSIs\/s sent, $_f LPIs\/s taken, $_f remaps\/s\$/BENCH lpi_churn_control lpis_per_s=\1 taken_per_s=\2 churn_per_s=\3/p" \
		-e "s/^Miss cost, $_n devices: $_n ns per miss, $_n ns per hit \(medians of $_n samples\)\$/BENCH lpi_miss devices=\1 miss_ns=\2 hit_ns=\3 samples=\4/p" \
		-e "s/$_lay, mapped: $_s bytes per event, $_s slab bytes, $_s charged, $_n LPIs\$/BENCH its_mem layout=\1 devices=\2 events=\3 cached=0 bytes_per_event=\4 slab_bytes=\5 charged_bytes=\6 lpis=\7/p" \
		-e "s/$_lay, mapped: $_s bytes per event, $_s slab bytes, $_n LPIs\$/BENCH its_mem layout=\1 devices=\2 events=\3 cached=0 bytes_per_event=\4 slab_bytes=\5 lpis=\6/p" \
		-e "s/$_lay, mapped and cached: $_s bytes per event, $_s slab bytes, $_s charged, $_n LPIs\$/BENCH its_mem layout=\1 devices=\2 events=\3 cached=1 bytes_per_event=\4 slab_bytes=\5 charged_bytes=\6 lpis=\7/p" \
		-e "s/$_lay, mapped and cached: $_s bytes per event, $_s slab bytes, $_n LPIs\$/BENCH its_mem layout=\1 devices=\2 events=\3 cached=1 bytes_per_event=\4 slab_bytes=\5 lpis=\6/p" \
		-e "s/$_lay: ([a-z_]+) took $_n us\$/BENCH its_walk op=\4 devices=\2 events=\3 time_us=\5 layout=\1/p" \
		"$1" >"$1.bench"
	cat "$1.bench" >>"$1"
	return 0
}

lpi_run() { # lpi_run OUTFILE ARGS...: rc of vgic_lpi_stress under timeout
	_o=$1
	shift
	# shellcheck disable=SC2086
	(cd "$(dirname "$LPI_BIN")" && timeout -k 10 "$BENCH_LPI_TIMEOUT" "$LPI_BIN" "$@" >"$_o" 2>&1)
	_rc=$?
	to_bench "$_o"
	return $_rc
}

# lpi_stress_run NAME TAG ARGS...: one vgic_lpi_stress run in stress
# mode: "BENCH NAME TAGlpis_per_s=<its Rate:>" (seconds=<wall> if it
# prints no rate) and its TAP line.
lpi_stress_run() {
	_name=$1 _tag=$2
	shift 2
	if [ ! -x "$LPI_BIN" ]; then
		tap "$_name" "no $LPI_BIN"
		return
	fi
	echo "# $_name: command: vgic_lpi_stress $*"
	_a=$(uptime_now)
	lpi_run "$T/lpi.out" "$@"
	_r=$?
	_b=$(uptime_now)
	if [ "$_r" != 0 ]; then
		comment "$T/lpi.out"
		tap "$_name" "exit=$_r"
		return
	fi
	sed 's/^/# /' "$T/lpi.out" | tail -n 5
	_rate=$(grep -m1 '^Rate: ' "$T/lpi.out" | { read -r _ v _ && echo "$v"; })
	if isnum "$_rate"; then
		echo "BENCH $_name ${_tag}lpis_per_s=$_rate"
	else
		echo "BENCH $_name ${_tag}seconds=$(fsub "$_b" "$_a")"
	fi
	tap "$_name"
}

# lpi_mode_run NAME TAG WHAT ARGS...: one vgic_lpi_stress run of a mode
# that prints its own "BENCH NAME ..." lines: pass them through with TAG
# inserted after NAME, or add "WHAT: <what went wrong>" to $why.
lpi_mode_run() {
	_name=$1 _tag=$2 _what=$3
	shift 3
	echo "# $_name: command: vgic_lpi_stress $*"
	lpi_run "$T/lpi.out" "$@"
	_r=$?
	# The churn mode's one check that is about the run rather than the
	# kernel: too few MSIs fell within unmapped windows (a slow kernel's
	# senders come round to a churned event less often). Every MSI was
	# still checked; the figure is kept, marked window_floor=0.
	_floor=1
	if [ "$_r" != 0 ] && [ "$(grep -c 'Test Assertion Failure' "$T/lpi.out")" = 1 ] &&
		grep -q 'the stale-translation check barely ran' "$T/lpi.out"; then
		echo "# $_name: $(grep -m1 'the stale-translation check barely ran' "$T/lpi.out" | sed 's/^ *//')"
		_r=0 _floor=0
	fi
	if [ "$_r" != 0 ]; then
		comment "$T/lpi.out"
		why="${why:+$why; }$_what: exit=$_r"
	elif [ "$_floor" = 0 ] && grep -q "^BENCH $_name " "$T/lpi.out"; then
		grep -v '^BENCH ' "$T/lpi.out" | sed 's/^/# /' | tail -n 8
		sed -n "s/^BENCH $_name /&$_tag/p" "$T/lpi.out" | sed 's/$/ window_floor=0/'
	elif grep -q "^BENCH $_name " "$T/lpi.out"; then
		grep -v '^BENCH ' "$T/lpi.out" | sed 's/^/# /' | tail -n 5
		sed -n "s/^BENCH $_name /&$_tag/p" "$T/lpi.out"
	else
		comment "$T/lpi.out"
		why="${why:+$why; }$_what: no 'BENCH $_name' line"
	fi
}

sc_lpi() {
	oldifs=$IFS
	IFS=';'
	set -f
	# shellcheck disable=SC2086
	set -- $BENCH_LPI_CONFIGS
	set +f
	IFS=$oldifs
	for args in "$@"; do
		# shellcheck disable=SC2086
		lpi_stress_run "lpi_$(lpi_name $args)" "" $args
	done

	help=
	[ -x "$LPI_BIN" ] && help=$("$LPI_BIN" -h 2>&1)
	has_opt() { echo "$help" | grep -qE "(^|[[:space:]]|\[)-$1([[:space:]]|:|\]|\$)"; }

	if ! has_opt c; then
		tap_skip lpi_churn "vgic_lpi_stress -h lists no -c (churn) mode"
	else
		why=
		for e in $BENCH_LPI_CHURN_EVENTS; do
			# events=E is part of the figure's name
			# shellcheck disable=SC2086
			lpi_mode_run lpi_churn "events=$e " "-e $e" $BENCH_LPI_CHURN_ARGS -e "$e"
		done
		tap lpi_churn "$why"
		# Each size's control: the same run with INV+SYNC in place of
		# each remap, so that no translation is invalidated.
		if ! has_opt k; then
			tap_skip lpi_churn_control "vgic_lpi_stress -h lists no -k (churn control)"
		else
			why=
			for e in $BENCH_LPI_CHURN_EVENTS; do
				# shellcheck disable=SC2086
				lpi_mode_run lpi_churn_control "events=$e " "-k -e $e" \
					$BENCH_LPI_CHURN_ARGS -k -e "$e"
			done
			tap lpi_churn_control "$why"
		fi
	fi

	if ! has_opt m; then
		tap_skip lpi_miss "vgic_lpi_stress -h lists no -m (miss-cost) mode"
	else
		why=
		for d in $BENCH_LPI_MISS_DEVICES; do
			# vgic_lpi_stress -m times up to 16 targets per round:
			# give every device count 16 events in all, so that each
			# run times the same number of misses per guest round trip.
			e=$(((16 + d - 1) / d))
			# shellcheck disable=SC2086
			lpi_mode_run lpi_miss "" "-d $d" $BENCH_LPI_MISS_ARGS -d "$d" -e "$e"
		done
		tap lpi_miss "$why"
	fi

	# The largest churn size's translations in stress mode: nothing is
	# remapped, and the LPIs stay pending. Not a bound for the churn run
	# (lpi_churn_control is): its pending LPIs load the vCPUs otherwise
	# than the LPIs that the churn run's guest takes.
	e=0
	for x in $BENCH_LPI_CHURN_EVENTS; do [ "$x" -gt "$e" ] && e=$x; done
	# shellcheck disable=SC2086
	lpi_stress_run lpi_warm "events=$e " $BENCH_LPI_WARM_ARGS -e "$e"
}

# ---- exit_cost
sc_exit_cost() {
	why=
	for v in $BENCH_EXIT_VMS; do
		echo "# exit_cost: command: vmid_isolation -n $v -d $BENCH_EXIT_SECONDS -i 1 -r 0"
		if [ ! -x "$ISO_BIN" ]; then
			why="no $ISO_BIN"
			break
		fi
		(cd "$(dirname "$ISO_BIN")" && timeout -k 10 $((BENCH_EXIT_SECONDS + 120)) \
			"$ISO_BIN" -n "$v" -d "$BENCH_EXIT_SECONDS" -i 1 -r 0 >"$T/exit.out" 2>&1)
		r=$?
		# "<n> VMs, <d> s: <rounds> rounds of 1 reads, ..."
		rounds=$(sed -n 's/.* s: \([0-9]*\) rounds of .*/\1/p' "$T/exit.out" | head -n 1)
		if [ "$r" != 0 ] || ! isnum "$rounds" || [ "$rounds" = 0 ]; then
			comment "$T/exit.out"
			why="${why:+$why; }-n $v: exit=$r"
			continue
		fi
		grep -v '^BENCH ' "$T/exit.out" | sed 's/^/# /' | tail -n 2
		echo "BENCH exit_cost vms=$v ns_per_exit=$(awk -v d="$BENCH_EXIT_SECONDS" -v v="$v" -v r="$rounds" \
			'BEGIN { printf "%.1f", d * 1e9 * v / r }') exits=$rounds"
	done
	tap exit_cost "$why"
}

# ---- its
# its_restore_run NAME N B: one vgic_its_save_restore -s run, "BENCH NAME
# devices=N bits=B ms=<its time_ms>", or a reason added to $why
its_restore_run() {
	_rn=$2 _rb=$3
	if [ ! -x "$SR_BIN" ]; then
		why="${why:+$why; }no $SR_BIN"
		return
	fi
	# -t: no bound, this is a measurement (the check is
	# vgic_its_save_restore@scale in make check)
	echo "# $1: command: vgic_its_save_restore -s -n $_rn -b $_rb -t 3600000"
	its_bin_run "$T/its.out" "$SR_BIN" -s -n "$_rn" -b "$_rb" -t 3600000
	_rr=$?
	# "restore: devices <n> eventid_bits <b> time_ms <ms>"
	_rms=$(sed -n "s/^restore: devices $_rn eventid_bits $_rb time_ms \([0-9.]*\)\$/\1/p" "$T/its.out" | head -n 1)
	if [ "$_rr" != 0 ]; then
		comment "$T/its.out"
		why="${why:+$why; }-n $_rn -b $_rb: exit=$_rr"
	elif ! isnum "$_rms"; then
		comment "$T/its.out"
		why="${why:+$why; }-n $_rn -b $_rb: no 'restore: devices $_rn eventid_bits $_rb' line"
	else
		echo "BENCH $1 devices=$_rn bits=$_rb ms=$_rms"
	fi
}

# its_bin_run OUTFILE BIN ARGS...: rc of an ITS selftest under timeout
its_bin_run() {
	_o=$1 _b=$2
	shift 2
	(cd "$(dirname "$_b")" && timeout -k 10 "$BENCH_ITS_TIMEOUT" "$_b" "$@" >"$_o" 2>&1)
	_rc=$?
	to_bench "$_o"
	return $_rc
}

sc_its() {
	why=
	if [ ! -x "$MEM_BIN" ]; then
		why="no $MEM_BIN"
	else
		echo "# its_mem: command: vgic_its_mem $BENCH_ITS_MEM_ARGS"
		# shellcheck disable=SC2086
		its_bin_run "$T/its.out" "$MEM_BIN" $BENCH_ITS_MEM_ARGS
		r=$?
		if [ "$r" != 0 ]; then
			comment "$T/its.out"
			why="exit=$r"
		elif ! grep -q '^BENCH its_mem ' "$T/its.out" || ! grep -q '^BENCH its_walk ' "$T/its.out"; then
			comment "$T/its.out"
			why="no 'BENCH its_mem' or 'BENCH its_walk' line"
		else
			grep -v '^BENCH ' "$T/its.out" | sed 's/^/# /' | tail -n 5
			grep '^BENCH its_' "$T/its.out"
		fi
	fi
	tap its_mem "$why"

	# "# <op>: 32767 SYNCs: <s> us; <op>: <t> us, ...", op mapc
	# and baser; -k: no bound, this is a measurement (the check is
	# kvm:vgic_its_collection_walk in make check)
	why=
	if [ ! -x "$WALK_BIN" ]; then
		why="no $WALK_BIN"
	else
		echo "# its_collection_walk: command: vgic_its_collection_walk -k 1000000000"
		its_bin_run "$T/its.out" "$WALK_BIN" -k 1000000000
		r=$?
		n=0
		for op in mapc baser; do
			l=$(sed -n "s/^# $op: [0-9]* SYNCs: \([0-9]*\) us; $op: \([0-9]*\) us, .*/\1 \2/p" "$T/its.out" | head -n 1)
			[ -n "$l" ] || continue
			echo "BENCH its_collection_walk op=$op time_us=${l#* } sync_queue_us=${l% *}"
			n=$((n + 1))
		done
		if [ "$r" != 0 ] || [ "$n" != 2 ]; then
			comment "$T/its.out"
			why="exit=$r, $n of 2 operations timed"
		fi
	fi
	tap its_collection_walk "$why"

	why=
	runs=
	for n in $BENCH_ITS_RESTORE_DEVICES; do runs="$runs $n:16"; done
	for b in $BENCH_ITS_RESTORE_BITS; do
		case " $runs " in
		*" $BENCH_ITS_RESTORE_BITS_DEVICES:$b "*) ;; # measured already
		*) runs="$runs $BENCH_ITS_RESTORE_BITS_DEVICES:$b" ;;
		esac
	done
	for nb in $runs; do
		its_restore_run its_restore "${nb%%:*}" "${nb#*:}"
	done
	tap its_restore "$why"
}

sc_its_large() {
	why=
	for n in $BENCH_ITS_RESTORE_LARGE; do
		its_restore_run its_restore_large "$n" 16
	done
	tap its_large "$why"
}

# ---- main
n=0
wanted hackbench_l1 && n=$((n + 1))
wanted nested_rollover && n=$((n + 1))
wanted exit_cost && n=$((n + 1))
wanted its && n=$((n + 2))
wanted its_large && n=$((n + 1))
if wanted lpi; then
	oldifs=$IFS
	IFS=';'
	for _c in $BENCH_LPI_CONFIGS; do n=$((n + 1)); done
	IFS=$oldifs
	n=$((n + 3))
fi
for s in $(echo "$want" | tr ',' ' '); do
	case $s in
	hackbench_l1 | nested_rollover | lpi | exit_cost | its | its_large) ;;
	*) echo "# unknown scenario '$s' in workbench.bench= (have: hackbench_l1 nested_rollover lpi exit_cost its its_large)" ;;
	esac
done
echo "KTAP version 1"
echo "1..$n"
echo "# bench: $(uname -r), $(nproc) cpus, scenarios: $want; cmdline:$cmdline"
wanted hackbench_l1 && sc_hackbench_l1
wanted nested_rollover && sc_nested_rollover
wanted lpi && sc_lpi
wanted exit_cost && sc_exit_cost
wanted its && sc_its
wanted its_large && sc_its_large
[ "$failed" = 0 ]
