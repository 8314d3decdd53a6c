// SPDX-License-Identifier: GPL-2.0
/*
 * cost_sweep.c - single-threaded driver for cost-sweep.sh: instructions of
 * the fast path, of one rollover and of the slow paths around it, with
 * NCPU possible CPUs, under valgrind --tool=callgrind
 * --toggle-collect=<the switch function>, so that only that function and
 * its callees count. The driver brackets the calls it measures with
 * CALLGRIND_DUMP_STATS_AT("skip") and CALLGRIND_DUMP_STATS_AT("<what>
 * <calls>"): each "<what>" dump holds the instructions of exactly those
 * calls (a dump, not CALLGRIND_ZERO_STATS, which leaves the cost of each
 * call's return point behind).
 *
 * Built in one of two ways, for the stock allocator or the series' one:
 *   VMIDs: linked with vmid.c (stock) or asid.c + vmid.c (lib); the switch
 *          is kvm_arm_vmid_update(), the flush hook __kvm_flush_vm_context()
 *          (broadcast, inside the rollover);
 *   ASIDs: -DSWEEP_ASID -DCONTEXT_C='"<path>/context.c"': this file
 *          includes context.c, whose initcalls are static (lib: linked with
 *          asid.c); the switch is check_and_switch_context(), the flush
 *          hook local_flush_tlb_all() (deferred: the rolling CPU's own
 *          flush is in its rolling call, the others' in their next switch).
 * The CPUs are simulated in the one thread (kshim_cpu), each of the NCPU
 * with its own context (VM or mm) ctx[c].
 *
 *   1. setup: CPU c switches to ctx[c] for every c (NCPU allocations);
 *   2. "fast F": CPU 0 switches F times to ctx[0] (current ID, no
 *      rollover: checked);
 *   3. R times:
 *      "roll 1": CPU 0 allocates for new contexts (a context whose ID is 0)
 *        until one allocation rolls over; the dump holds that call only.
 *        The program is deterministic: a first run without ROLL_AT prints
 *        which call of each generation rolls over ("roll_at=i,j,..."), the
 *        measured run gets them in ROLL_AT and checks them;
 *      "slow 1": one more new context on CPU 0, no rollover (checked);
 *      "reswitch 1": the first CPU c >= 1 with (c + r) even switches back
 *        to ctx[c] (a slow path through the reserved IDs); then every
 *        other such CPU does, unmeasured. Their IDs must keep their index
 *        (checked for every one): the rollover reserved the slot of each
 *        of the NCPU CPUs, running (active) or idle since the rollover
 *        before (reserved). The others stay idle until the next rollover,
 *        so both cases occur from the second rollover on.
 *   rollover = roll - slow: the generation bump, flush_context() (the loop
 *   over the CPUs' slots, the map reset), the flush hook, the tracepoint
 *   stub (lib) and the search of the map again; the failed search at the
 *   end of the map is also in it (one or two words).
 *
 * Usage: cost_sweep F R. Env: NCPU (2..NR_CPUS), ROLL_AT, VMID_BITS (VMIDs
 * only, default 10; ASIDs are 16 bits: stock context.c has no clamp).
 * Prints "kind=.. ncpu=.. bits=.. rollovers=.. flushes=.. warns=.."
 * (after "roll_at=..." without ROLL_AT); exit 0 on success, 1 on a failed
 * check.
 */
#include "shim/kshim.h"
#include <valgrind/callgrind.h>

#define KSHIM_DEFAULT_CPUS	NR_CPUS
#define KSHIM_DEFAULT_VMID_BITS	10
#include "shim/kshim_globals.h"

static unsigned long nr_bcast, nr_local;

/* the flush hooks: nothing to model here, just count */
__attribute__((noinline)) void __kvm_flush_vm_context(void)
{
	nr_bcast++;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void kshim_local_flush_tlb_all(void)
{
	nr_local++;
	__asm__ volatile("" ::: "memory");
}

#ifdef SWEEP_ASID
#include CONTEXT_C

typedef struct mm_struct ctx_t;
#define ctx_id(c)	(&(c)->context.id)
#define GEN_SHIFT	16
/* called through a pointer: never inlined into this file's loops */
static void (*volatile sw_switch)(struct mm_struct *) = check_and_switch_context;
static const char *kind = "asid";

static int sw_init(void)
{
	kshim_mmfr0 = (u64)ID_AA64MMFR0_EL1_ASIDBITS_16 << ID_AA64MMFR0_EL1_ASIDBITS_SHIFT;
	asids_init();
	asids_update_limit();
	return 16;
}
static unsigned long sw_flushes(void) { return nr_local; }
#else
typedef struct kvm_vmid ctx_t;
#define ctx_id(c)	(&(c)->id)
#define GEN_SHIFT	kvm_arm_vmid_bits
static void (*volatile sw_switch)(struct kvm_vmid *) = kvm_arm_vmid_update;
static const char *kind = "vmid";

static int sw_init(void)
{
	const char *e = getenv("VMID_BITS");

	if (e)
		kshim_vmid_bits = atoi(e);
	if (kvm_arm_vmid_alloc_init() || kvm_arm_vmid_bits != kshim_vmid_bits)
		return -1;
	return kvm_arm_vmid_bits;
}
static unsigned long sw_flushes(void) { return nr_bcast; }
#endif

static ctx_t ctx[NR_CPUS], scratch;

static u64 idx(u64 id, int bits) { return id & ((1ULL << bits) - 1); }
static u64 gen(u64 id) { return id >> GEN_SHIFT; }

static int fail(const char *msg, unsigned long a, unsigned long b)
{
	fprintf(stderr, "FAIL: %s (%lu, %lu)\n", msg, a, b);
	return 1;
}

/* ROLL_AT: "i,j,...": the new-context call of each generation that rolls over */
static unsigned long roll_at[64];
static int nr_roll_at = -1;

static int parse_roll_at(const char *e)
{
	char *end;

	for (nr_roll_at = 0; *e && nr_roll_at < 64; nr_roll_at++) {
		roll_at[nr_roll_at] = strtoul(e, &end, 10);
		if (end == e || (*end && *end != ','))
			return -1;
		e = *end ? end + 1 : end;
	}
	return *e ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long f, r, nr_roll, i, fl;
	int bits, c, n;
	u64 cur, id, g, last;
	const char *e;
	char what[32];

	if (argc != 3 || !(f = strtoul(argv[1], NULL, 0)) ||
	    !(r = strtoul(argv[2], NULL, 0)) || r > 64) {
		fprintf(stderr, "usage: %s <fast calls> <rollovers (1..64)>\n", argv[0]);
		return 1;
	}
	if ((e = getenv("NCPU")))
		kshim_nr_cpus = atoi(e);
	n = kshim_nr_cpus;
	if (n < 2 || n > NR_CPUS) {
		fprintf(stderr, "NCPU must be 2..%d\n", NR_CPUS);
		return 1;
	}
	if ((e = getenv("ROLL_AT")) && (parse_roll_at(e) || nr_roll_at != (int)r)) {
		fprintf(stderr, "ROLL_AT='%s': not %lu comma-separated numbers\n", e, r);
		return 1;
	}
	kshim_cpu = 0;
	bits = sw_init();
	if (bits < 2 || bits > 16 || (1UL << bits) - 1 <= (unsigned long)n + 1) {
		fprintf(stderr, "init failed or too few IDs (bits=%d) for %d CPUs\n", bits, n);
		return 1;
	}

	/* 1. every CPU runs a context of its own */
	for (c = 0; c < n; c++) {
		kshim_cpu = c;
		sw_switch(&ctx[c]);
	}
	kshim_cpu = 0;
	if (sw_flushes())
		return fail("rollover during setup", sw_flushes(), 0);
	last = atomic64_read(ctx_id(&ctx[n - 1]));

	/* 2. fast path */
	sw_switch(&ctx[0]);
	cur = atomic64_read(ctx_id(&ctx[0]));
	CALLGRIND_DUMP_STATS_AT("skip");
	for (i = 0; i < f; i++)
		sw_switch(&ctx[0]);
	snprintf(what, sizeof(what), "fast %lu", f);
	CALLGRIND_DUMP_STATS_AT(what);
	if (sw_flushes() || (u64)atomic64_read(ctx_id(&ctx[0])) != cur)
		return fail("fast path run changed the ID or rolled over", sw_flushes(), 0);

	if (nr_roll_at < 0)
		printf("roll_at=");
	for (nr_roll = 0; nr_roll < r; nr_roll++) {
		int measured = 0;

		/*
		 * 3a. new contexts on CPU 0 until one rolls over. The program
		 * is deterministic: a first run without ROLL_AT finds which
		 * call that is, and prints it; a run with ROLL_AT dumps the
		 * costs before that call (so that "roll" holds it alone) and
		 * checks that it is the one. A dump, not CALLGRIND_ZERO_STATS,
		 * which leaves the cost of each call's return point behind.
		 */
		kshim_cpu = 0;
		fl = sw_flushes();
		g = gen(last);
		for (i = 0;; i++) {
			atomic64_set(ctx_id(&scratch), 0);
			if (nr_roll_at >= 0 && i == roll_at[nr_roll])
				CALLGRIND_DUMP_STATS_AT("skip");
			sw_switch(&scratch);
			cur = atomic64_read(ctx_id(&scratch));
			if (gen(cur) != g)
				break;
			if (i > (1UL << bits))
				return fail("no rollover after 2^bits new contexts", i, 0);
		}
		if (nr_roll_at < 0)
			printf("%s%lu", nr_roll ? "," : "", i);
		else if (i != roll_at[nr_roll])
			return fail("the rollover is not at the ROLL_AT call", i, roll_at[nr_roll]);
		CALLGRIND_DUMP_STATS_AT("roll 1");
		if (sw_flushes() != fl + 1 || gen(cur) != g + 1)
			return fail("rolling call: not one flush and one generation",
				    sw_flushes() - fl, gen(cur) - g);

		/* 3b. a new context without rollover */
		atomic64_set(ctx_id(&scratch), 0);
		sw_switch(&scratch);
		CALLGRIND_DUMP_STATS_AT("slow 1");
		last = atomic64_read(ctx_id(&scratch));
		if (gen(last) != g + 1 || sw_flushes() != fl + 1)
			return fail("new context after the rollover rolled over", 0, 0);

		/* 3c. half the CPUs switch back to their context */
		for (c = 1; c < n; c++) {
			if ((c + nr_roll) % 2)
				continue;
			kshim_cpu = c;
			id = atomic64_read(ctx_id(&ctx[c]));
			sw_switch(&ctx[c]);
			if (!measured)
				CALLGRIND_DUMP_STATS_AT("reswitch 1");
			measured = 1;
			cur = atomic64_read(ctx_id(&ctx[c]));
			if (idx(cur, bits) != idx(id, bits) || gen(cur) != g + 1)
				return fail("a CPU's context lost its reserved ID index at the rollover",
					    c, nr_roll);
		}
		kshim_cpu = 0;
	}
	if (nr_roll_at < 0)
		printf("\n");
	printf("kind=%s ncpu=%d bits=%d rollovers=%lu flushes=%lu bcast=%lu local=%lu warns=%d\n",
	       kind, n, bits, nr_roll, sw_flushes(), nr_bcast, nr_local, kshim_warns);
	return kshim_warns ? 1 : 0;
}
