// SPDX-License-Identifier: GPL-2.0
/*
 * rollover_cost.c - single-threaded, deterministic rollover counter for one
 * arch/arm64/kvm/vmid.c, compiled UNMODIFIED against the harness shim
 * (/work/main/selftests/harness/shim).  This file #includes "vmid.c"
 * (-iquote picks stock/ or fix/), only to read its statics for the checks
 * and statistics (vmid_generation, vmid_map, active_vmids, reserved_vmids);
 * the allocator is driven only through kvm_arm_vmid_update() and
 * kvm_arm_vmid_clear_active(), as vcpu_load()/vcpu_put() do in 6.12.
 *
 * Schedule (a pure function of the seed, independent of the allocator):
 * every step draws, always in this order, a CPU c (uniform over NCPU), a
 * uniform u in [0,1), a VM v (uniform over NVM) and a uniform k in [0,1),
 * from splitmix64(seed).
 *   u <  P  "put":  if c runs a vCPU: vcpu_put (clear_active), c idle;
 *                   if c is idle: nothing.
 *   u >= P  "load": if c runs a vCPU and k < KEEP: nothing (the vCPU keeps
 *                   running; KEEP = 0 by default, a sensitivity knob);
 *                   otherwise, if c runs a vCPU, vcpu_put first (a context
 *                   switch: put always precedes the next load on a CPU);
 *                   then vcpu_load of a vCPU of v (kvm_arm_vmid_update).
 * SLOW (default 0): the last SLOW CPUs are picked with 1/100 of the weight
 * of the others (CPUs that run vCPUs rarely: long idle and running
 * periods); then c comes from r1 as a double instead of r1 % NCPU.
 * With KEEP = 0, in steady state a fraction P of the CPUs is idle, a
 * running period lasts one pick of its CPU (NCPU steps on average) and an
 * idle one 1/(1-P) picks.
 *
 * Checks after every load: index != 0; the VM's ID is of the current
 * generation; among running CPUs, same index iff same VM (I1); at the end
 * flushes == generation increments.
 *
 * Usage: rollover_cost NCPU VMID_BITS NVM P STEPS SEED0  NSEEDS [KEEP [SLOW]]
 * One forked child per seed (fresh statics, including new_vmid()'s
 * cur_idx), run one after the other.  Prints per seed:
 *   seed= rollovers= gens= loads= puts= slow= resv= resv_idle= sched=
 * resv: mean number of real IDs (index != 0) the rollovers reserved;
 * resv_idle: of those, how many for CPUs idle at the rollover (the rolling
 * CPU counts as idle: it has just put, or was idle); sched: hash of the
 * schedule (must be equal across variants).
 */
#include "kshim.h"
#include <sys/wait.h>
#include <unistd.h>

#define KSHIM_DEFAULT_CPUS	NR_CPUS
#define KSHIM_DEFAULT_VMID_BITS	4
#include "kshim_globals.h"

/* count the slow paths: the shim's lock, plus a counter */
static unsigned long nr_slow;
#undef raw_spin_lock_irqsave
#define raw_spin_lock_irqsave(l, f) \
	do { (void)(f); nr_slow++; pthread_mutex_lock(&(l)->m); } while (0)

#include "vmid.c"

#define MAXVM	(1 << 16)
static struct kvm_vmid vms[MAXVM];
static int cur[NR_CPUS];	/* VM running on the CPU, -1 idle */
static u64 run_id[NR_CPUS];	/* the ID it loaded */
static unsigned long nr_flush, resv_sum, resv_idle_sum;

/* runs at the end of flush_context(): the new generation's map holds the
 * reserved IDs (bit 0: the put sentinel's index, not a real ID) */
void __kvm_flush_vm_context(void)
{
	int c;

	nr_flush++;
	for (c = 0; c < kshim_nr_cpus; c++) {
		u64 idx = vmid2idx(per_cpu(reserved_vmids, c));

		if (idx) {
			resv_sum++;
			resv_idle_sum += cur[c] < 0;
		}
	}
}

static u64 sm_state;
static u64 splitmix64(void)
{
	u64 z = (sm_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int fail(const char *m, unsigned long step, int c)
{
	fprintf(stderr, "FAIL: %s at step %lu cpu %d\n", m, step, c);
	return 1;
}

static int run(int ncpu, int bits, int nvm, double p, double keep,
	       int slow, unsigned long steps, u64 seed)
{
	unsigned long s, loads = 0, puts = 0;
	u64 sched = 1469598103934665603ULL, gens;
	int c, d;

	kshim_nr_cpus = ncpu;
	kshim_vmid_bits = bits;
	kshim_cpu = 0;
	if (kvm_arm_vmid_alloc_init() || kvm_arm_vmid_bits != (unsigned)bits)
		return fail("init", 0, 0);
	for (c = 0; c < ncpu; c++)
		cur[c] = -1;
	sm_state = seed;

	for (s = 0; s < steps; s++) {
		u64 r1 = splitmix64(), r2 = splitmix64(), r3 = splitmix64();
		u64 r4 = splitmix64();
		int v = (int)(r3 % (u64)nvm);
		double u = (double)(r2 >> 11) * 0x1.0p-53;
		double k = (double)(r4 >> 11) * 0x1.0p-53;
		u64 id;

		if (!slow) {
			c = (int)(r1 % (u64)ncpu);
		} else {	/* weights 1 (fast CPUs), 0.01 (the last slow) */
			double w = (double)(r1 >> 11) * 0x1.0p-53 *
				   ((ncpu - slow) + 0.01 * slow);

			c = w < ncpu - slow ? (int)w :
			    ncpu - slow + (int)((w - (ncpu - slow)) / 0.01);
			if (c >= ncpu)
				c = ncpu - 1;
		}
		sched = (sched ^ (u64)(c * 1000003 + v * 7 + (u < p) * 2 +
				       (k < keep))) * 1099511628211ULL;
		kshim_cpu = c;
		if (u >= p && cur[c] >= 0 && k < keep)
			continue;			/* keeps running */
		if (cur[c] >= 0) {			/* vcpu_put */
			kvm_arm_vmid_clear_active();
			cur[c] = -1;
			puts++;
		}
		if (u < p)
			continue;
		kvm_arm_vmid_update(&vms[v]);		/* vcpu_load */
		loads++;
		cur[c] = v;
		id = atomic64_read(&vms[v].id);
		run_id[c] = id;
		if (!vmid2idx(id))
			return fail("index 0", s, c);
		if (!vmid_gen_match(id))
			return fail("ID not of the current generation", s, c);
		for (d = 0; d < ncpu; d++) {
			if (d == c || cur[d] < 0)
				continue;
			if ((vmid2idx(run_id[d]) == vmid2idx(id)) != (cur[d] == v))
				return fail("I1: same index iff same VM", s, c);
		}
	}
	gens = (u64)atomic64_read(&vmid_generation) / VMID_FIRST_VERSION - 1;
	if (gens != nr_flush)
		return fail("flushes != generation increments", s, 0);
	if (kshim_warns)
		return fail("WARN_ON", s, 0);
	printf("seed=%llu rollovers=%lu gens=%llu loads=%lu puts=%lu slow=%lu "
	       "resv=%.4f resv_idle=%.4f sched=%016llx\n",
	       seed, nr_flush, gens, loads, puts, nr_slow,
	       nr_flush ? (double)resv_sum / nr_flush : 0.0,
	       nr_flush ? (double)resv_idle_sum / nr_flush : 0.0, sched);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int ncpu, bits, nvm, nseeds, i;
	unsigned long steps;
	u64 seed0;
	double p;

	double keep = 0;
	int slow = 0;

	if (argc < 8 || argc > 10) {
		fprintf(stderr, "usage: %s NCPU VMID_BITS NVM P STEPS SEED0 NSEEDS [KEEP [SLOW]]\n", argv[0]);
		return 1;
	}
	ncpu = atoi(argv[1]);
	bits = atoi(argv[2]);
	nvm = atoi(argv[3]);
	p = atof(argv[4]);
	steps = strtoul(argv[5], NULL, 0);
	seed0 = strtoull(argv[6], NULL, 0);
	nseeds = atoi(argv[7]);
	if (argc >= 9)
		keep = atof(argv[8]);
	if (argc >= 10)
		slow = atoi(argv[9]);
	if (ncpu < 1 || ncpu > NR_CPUS || bits < 2 || bits > 16 ||
	    nvm < 1 || nvm > MAXVM || p < 0 || p > 1 || keep < 0 ||
	    keep >= 1 || slow < 0 || slow >= ncpu || nseeds < 1) {
		fprintf(stderr, "bad arguments\n");
		return 1;
	}
	for (i = 0; i < nseeds; i++) {
		int st;
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid)
			_exit(run(ncpu, bits, nvm, p, keep, slow, steps, seed0 + i));
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return 0;
}
