// SPDX-License-Identifier: GPL-2.0
/*
 * vmid_stress.c - userspace stress driver for the arm64 VMID allocator,
 * linked against either the stock arch/arm64/kvm/vmid.c or the series'
 * arch/arm64/lib/asid.c + thin arch/arm64/kvm/vmid.c, all compiled
 * unmodified against shim/kshim.h.
 *
 * NCPU threads act as CPUs; each iteration picks a random VM, calls
 * kvm_arm_vmid_update() ("vcpu_load"), reads the VMID as VTTBR would,
 * "enters the guest" and checks:
 *   I0: the VMID index is never 0 (reserved / the inactive sentinel)
 *   I1: two CPUs running concurrently hold the same VMID index iff they
 *       run the same VM
 *   I2: per-CPU modelled TLB: a CPU never fills (index -> VM) while an
 *       entry (index -> other VM) is present; entries are removed only by
 *       the broadcast flush (__kvm_flush_vm_context hook).  Fills happen at
 *       guest entry and again at guest exit (speculative fill while
 *       running).
 * then kvm_arm_vmid_clear_active() ("vcpu_put").
 *
 * Checker state uses relaxed atomics only, so TSan sees no extra
 * happens-before edges between the CPU threads (races inside the
 * allocator are not hidden).  x86-TSO keeps the checks free of false
 * alarms.
 *
 * Library build only (detected by the early_param() that vmid.c registers
 * under CONFIG_ARM64_DEBUG_ASID_BITS): the hardware width is 16 bits and
 * the width is limited to VMID_BITS through "kvm-arm.vmid_bits", i.e.
 * asid_debug_clamp_bits(); and every rollover must hit the tracepoint
 * once (T: trace_asid_rollover() calls == broadcast flushes).
 *
 * Usage: vmid_stress <iterations per cpu> [min rollovers]
 * Env:   KSHIM_YIELD=<pct>, KSHIM_SEED=<n>, VMID_BITS (default 3),
 *        NVM (default 12)
 */
#include "shim/kshim.h"

#include <unistd.h>

#define MAXCPU	4
static int NCPU = MAXCPU;
#define MAXVM	64

#define KSHIM_DEFAULT_CPUS	MAXCPU
#define KSHIM_DEFAULT_VMID_BITS	3
#include "shim/kshim_globals.h"
/* only the series' vmid.c has it */
extern void kvm_arm_vmid_release(struct kvm *kvm) __attribute__((weak));

static struct kvm vms[MAXVM];
#define VMID(vm)	(&vms[vm].arch.mmu.vmid)
static int nvm = 12;
static unsigned long iters = 100000;

/* checker state */
static u64 running[MAXCPU];		/* (vm + 1) << 32 | index, 0 = idle */
static u64 tlb[MAXCPU][1 << 16];		/* (vm + 1) | vmid << 16 of the filler */
static u64 nr_flush, nr_iter, max_gen;
static pthread_barrier_t start_barrier;
static int failed;
static int no_put_mb;

#define RD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WR(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define CBAR()		__atomic_signal_fence(__ATOMIC_SEQ_CST)

static void fail(const char *what, int cpu, int vm, u64 vmid, int other,
		 long otherval)
{
	fprintf(stderr,
		"FAIL %s: cpu%d vm%d vmid=%#llx (index %llu) vs cpu/vm %d/%ld\n",
		what, cpu, vm, (unsigned long long)vmid,
		(unsigned long long)(vmid & ((1ULL << kvm_arm_vmid_bits) - 1)),
		other, otherval);
	WR(failed, 1);
}

/* broadcast TLB flush: clears every CPU's modelled TLB */
void __kvm_flush_vm_context(void)
{
	int c;
	unsigned int i;

	__atomic_add_fetch(&nr_flush, 1, __ATOMIC_RELAXED);
	for (c = 0; c < NCPU; c++)
		for (i = 0; i < (1U << kvm_arm_vmid_bits); i++)
			WR(tlb[c][i], 0);
	CBAR();
}

static void tlb_fill(int cpu, int vm, u64 vmid, unsigned int idx)
{
	u64 e = RD(tlb[cpu][idx]);
	int owner = (int)(e & 0xffff) - 1;

	if (e && owner != vm) {
		fail("I2 stale TLB entry of another VM under this index",
		     cpu, vm, vmid, cpu, owner);
		fprintf(stderr, "     stale entry filled with vmid %#llx\n",
			(unsigned long long)(e >> 16));
	}
	WR(tlb[cpu][idx], (u64)(vm + 1) | vmid << 16);
}

static void *cpu_thread(void *arg)
{
	int cpu = (int)(long)arg;
	u64 mask = (1ULL << kvm_arm_vmid_bits) - 1;
	unsigned long it;
	const char *s = getenv("KSHIM_SEED");

	kshim_cpu = cpu;
	kshim_seed = (s ? atoi(s) : getpid()) * 7919 + cpu;
	pthread_barrier_wait(&start_barrier);

	for (it = 0; it < iters && !RD(failed); it++) {
		int vm = rand_r(&kshim_seed) % nvm;
		u64 vmid, idx;
		int o;

		kvm_arm_vmid_update(VMID(vm));			/* vcpu_load */
		vmid = atomic64_read(&VMID(vm)->id);		/* VTTBR */
		idx = vmid & mask;
		{	/* rollovers counted from generations seen, not flushes */
			u64 g = vmid >> kvm_arm_vmid_bits, m = RD(max_gen);

			while (g > m && !__atomic_compare_exchange_n(&max_gen,
					&m, g, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				;
		}
		if (idx == 0)
			fail("I0 entering with VMID index 0", cpu, vm, vmid, -1, 0);

		/* enter the guest: publish, then check the other CPUs */
		WR(running[cpu], ((u64)(vm + 1) << 32) | (vmid & 0xffffffff));
		CBAR();
		for (o = 0; o < NCPU; o++) {
			u64 r;
			int ovm;

			if (o == cpu)
				continue;
			r = RD(running[o]);
			if (!r)
				continue;
			ovm = (int)(r >> 32) - 1;
			if (ovm == vm && (r & mask) != idx)
				fail("I1 same VM, different VMIDs", cpu, vm,
				     vmid, o, (long)(r & 0xffffffff));
			if (ovm != vm && (r & mask) == idx)
				fail("I1 different VMs, same VMID", cpu, vm,
				     vmid, o, ovm),
				fprintf(stderr, "     other runs vmid %#llx\n",
					(unsigned long long)(r & 0xffffffff));
		}
		tlb_fill(cpu, vm, vmid, idx);
		if (kshim_yield_pct && (int)(rand_r(&kshim_seed) % 100) < kshim_yield_pct)
			sched_yield();				/* guest runs */
		if (!getenv("NO_EXIT_FILL"))
			tlb_fill(cpu, vm, vmid, idx);		/* speculative fill */
		CBAR();
		WR(running[cpu], 0);
		CBAR();
		kvm_arm_vmid_clear_active();			/* vcpu_put */
		/*
		 * Full barrier between vcpu_put and the next vcpu_load (in the
		 * kernel: the context switch / vcpu mutex).  Without it x86
		 * store->load reordering lets the sentinel store pass the next
		 * update's fast-path reads, and the stock fast path then
		 * accepts an old-generation VMID (see README.md).  NO_PUT_MB=1
		 * removes it.
		 */
		if (!no_put_mb)
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	__atomic_add_fetch(&nr_iter, it, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXCPU];
	unsigned long min_roll = 1;
	u64 rollovers;
	const char *e;
	unsigned int want_bits;
	long c;

	if (argc > 1)
		iters = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		min_roll = strtoul(argv[2], NULL, 0);
	if ((e = getenv("KSHIM_YIELD")))
		kshim_yield_pct = atoi(e);
	if ((e = getenv("VMID_BITS")))
		kshim_vmid_bits = atoi(e);
	no_put_mb = getenv("NO_PUT_MB") != NULL;
	if ((e = getenv("NCPU")))
		NCPU = kshim_nr_cpus = atoi(e);
	if (NCPU < 1 || NCPU > MAXCPU) {
		fprintf(stderr, "bad NCPU\n");
		return 1;
	}
	if ((e = getenv("NVM")))
		nvm = atoi(e);
	if (nvm < 1 || nvm > MAXVM || kshim_vmid_bits < 2 || kshim_vmid_bits > 16) {
		fprintf(stderr, "bad NVM/VMID_BITS\n");
		return 1;
	}

	want_bits = kshim_vmid_bits;
	if (kshim_early_param_fn) {	/* library: width via the debug clamp */
		char arg[16];

		snprintf(arg, sizeof(arg), "%u", want_bits);
		kshim_vmid_bits = 16;	/* "hardware" width */
		if (kshim_early_param_fn(arg)) {
			fprintf(stderr, "%s=%s rejected\n", kshim_early_param_name, arg);
			return 1;
		}
	}
	if (kvm_arm_vmid_alloc_init()) {
		fprintf(stderr, "kvm_arm_vmid_alloc_init failed\n");
		return 1;
	}
	if (kvm_arm_vmid_bits != want_bits) {
		fprintf(stderr, "FAIL setup: kvm_arm_vmid_bits=%u, wanted %u\n",
			kvm_arm_vmid_bits, want_bits);
		return 1;
	}
	pthread_barrier_init(&start_barrier, NULL, NCPU);
	for (c = 0; c < NCPU; c++)
		pthread_create(&th[c], NULL, cpu_thread, (void *)c);
	for (c = 0; c < NCPU; c++)
		pthread_join(th[c], NULL);
	if (kvm_arm_vmid_release)
		for (c = 0; c < nvm; c++)
			kvm_arm_vmid_release(&vms[c]);	/* no pins: no-op */
	kvm_arm_vmid_alloc_free();
	if (kshim_early_param_fn && kshim_trace_hits != nr_flush) {
		fprintf(stderr, "FAIL T: %lu rollover tracepoint hits, %llu flushes\n",
			kshim_trace_hits, (unsigned long long)nr_flush);
		WR(failed, 1);
	}

	rollovers = max_gen ? max_gen - 1 : 0;
	printf("cpus=%d vms=%d vmid_bits=%u yield=%d%% iterations=%llu rollovers=%llu flushes=%llu tracepoints=%lu warns=%d\n",
	       NCPU, nvm, kvm_arm_vmid_bits, kshim_yield_pct,
	       (unsigned long long)nr_iter, (unsigned long long)rollovers,
	       (unsigned long long)nr_flush, kshim_trace_hits, kshim_warns);
	if (failed) {
		printf("RESULT: invariant violated\n");
		return 3;
	}
	if (kshim_warns) {
		printf("RESULT: WARN_ON fired\n");
		return 3;
	}
	if (rollovers < min_roll) {
		printf("RESULT: vacuous run: %llu rollovers < %lu required\n",
		       (unsigned long long)rollovers, min_roll);
		return 4;
	}
	printf("RESULT: ok\n");
	return 0;
}
