#!/bin/bash
# Build arch/arm64/kvm/vmid.c UNMODIFIED against shim/ and stress it.
# KSRC: kernel tree (default /work/trees/ref); ALLOC_SRC: allocator source(s)
# (default $KSRC/arch/arm64/kvm/vmid.c).  Mutants are sed edits of a copy.
# Exit: 0 all good, 1 setup/clean failure, 2 a mutant survived.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
KSRC=${KSRC:-/work/trees/ref}
ALLOC_SRC=${ALLOC_SRC:-$KSRC/arch/arm64/kvm/vmid.c}
ITERS=${ITERS:-100000}		# per CPU thread
MINROLL=${MINROLL:-1000}	# a clean run must see at least this many rollovers
[ -d "$KSRC/arch/arm64" ] || { echo "ERROR: KSRC=$KSRC is not a kernel tree"; exit 1; }
for f in $ALLOC_SRC; do [ -f "$f" ] || { echo "ERROR: ALLOC_SRC file $f missing"; exit 1; }; done
W=$(mktemp -d /tmp/vmid-harness.XXXXXX)
trap 'rm -rf "$W"' EXIT
CC=${CC:-gcc}
CFLAGS="-g -Wall -Wno-unused-function -I$HERE/shim"
pass=0; fail=0; survived=0

build() {	# name flags sources...
	local n=$1 fl=$2; shift 2
	$CC $CFLAGS $fl -o "$W/$n" "$HERE/vmid_stress.c" "$@" -lpthread 2>"$W/$n.cc" ||
		{ echo "ERROR: build $n failed"; cat "$W/$n.cc"; exit 1; }
}
mutate() {	# name sed-expr: copy of ALLOC_SRC with one edit, must change
	local n=$1 e=$2 out=() f
	for f in $ALLOC_SRC; do
		sed "$e" "$f" > "$W/$n-$(basename "$f")"
		out+=("$W/$n-$(basename "$f")")
	done
	cat $ALLOC_SRC | cmp -s - <(cat "${out[@]}") &&
		{ echo "ERROR: mutant $n: sed '$e' changed nothing (source drifted?)"; exit 1; }
	MUT=("${out[@]}")
}
# clean NAME binary [env...]
clean() {
	local n=$1 b=$2; shift 2
	env "$@" TSAN_OPTIONS="halt_on_error=1 exitcode=66" timeout 30 nice "$W/$b" "$ITERS" "$MINROLL" >"$W/$n.out" 2>&1
	local rc=$? s=$(grep -m1 '^cpus=' "$W/$n.out")
	if [ $rc -eq 0 ]; then echo "PASS  $n: $s"; pass=$((pass+1))
	else echo "FAIL  $n (rc=$rc): $s"; grep -m3 -E "FAIL|WARNING|RESULT|ERROR" "$W/$n.out"; fail=$((fail+1)); fi
}
# mutant NAME binary tries pattern [env...]: caught if any try fails with pattern
mutant() {
	local n=$1 b=$2 tries=$3 pat=$4 i; shift 4
	for i in $(seq 1 "$tries"); do
		env "$@" KSHIM_SEED=$i TSAN_OPTIONS="halt_on_error=1 exitcode=66" timeout 30 nice "$W/$b" "$ITERS" 0 >"$W/$n.out" 2>&1
		if [ $? -ne 0 ] && grep -q -E "$pat" "$W/$n.out"; then
			echo "PASS  $n: caught on try $i: $(grep -m1 -E "$pat" "$W/$n.out" | cut -c1-100)"
			pass=$((pass+1)); return
		fi
	done
	echo "FAIL  $n: SURVIVED $tries tries: $(grep -m1 '^cpus=' "$W/$n.out")"
	fail=$((fail+1)); survived=1
}

build plain "-O2" $ALLOC_SRC
build tsan "-O1 -fsanitize=thread" $ALLOC_SRC
build asan "-O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined" $ALLOC_SRC

clean tsan           tsan
clean tsan-yield5    tsan KSHIM_YIELD=5
clean asan-ubsan     asan
clean plain          plain
clean plain-yield5   plain KSHIM_YIELD=5

mutate m1 's/vmid = per_cpu(reserved_vmids, cpu);/vmid = 0;/'
build m1 "-O2" "${MUT[@]}"
mutate m2 's/0 != atomic64_cmpxchg_relaxed(/0 != 1 + 0 * atomic64_cmpxchg_relaxed(/'
build m2 "-O2" "${MUT[@]}"
mutate m3 's/kvm_call_hyp(__kvm_flush_vm_context);/\/* mutant: no flush *\//'
build m3 "-O2" "${MUT[@]}"
mutate m4 's/old_active_vmid = atomic64_read(this_cpu_ptr(&active_vmids));/old_active_vmid = this_cpu_ptr(\&active_vmids)->counter;/'
build m4 "-O1 -fsanitize=thread" "${MUT[@]}"

mutant m1-no-reserved   m1 3 "FAIL I"
mutant m2-no-zero-check m2 4 "FAIL I" KSHIM_YIELD=5
mutant m3-no-flush      m3 3 "FAIL I"
mutant m4-plain-read    m4 3 "ThreadSanitizer: data race"
# Store->load reordering of the sched-out sentinel (README.md): without a
# full barrier between vcpu_put and the next vcpu_load the stock code
# admits a stale VMID under x86-TSO.  Informational, not gated.
env NO_PUT_MB=1 timeout 20 nice "$W/plain" 200000 0 >"$W/nomb.out" 2>&1 &&
	echo "INFO  no-put-barrier run: no violation this time" ||
	echo "INFO  no-put-barrier run: $(grep -m1 FAIL "$W/nomb.out" | cut -c1-100)"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && exit 0
[ $survived -eq 1 ] && exit 2
exit 1
