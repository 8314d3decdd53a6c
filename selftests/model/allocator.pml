/*
 * allocator.pml - Promela model of the arm64 generation/rollover ID
 * allocator shared by ASIDs (arch/arm64/mm/context.c) and VMIDs
 * (arch/arm64/kvm/vmid.c), checked with SPIN.
 *
 * Policies (pick one):
 *   -DPOLICY_VMID  broadcast TLB flush at rollover, sched-out stores the
 *                  VMID_ACTIVE_INVALID sentinel (generation 1, index 0).
 *   -DPOLICY_ASID  deferred flush: tlb_flush_pending mask set at rollover,
 *                  local flush on the CPU's next slow path; no sched-out.
 *   -DPIN          (ASID only) context 0 is pinned: keeps its index across
 *                  rollovers, pinned map copied into the map at rollover.
 *
 * Mutants (each must produce an assertion violation):
 *   -DNO_RESERVED       flush_context forgets the reserved id (0 result
 *                       of the xchg is recorded as 0, not reserved[cpu])
 *   -DNO_ZERO_CHECK     fast path ignores a zero cmpxchg result
 *   -DNO_FLUSH          no TLB flush at rollover (neither broadcast nor
 *                       flush-pending)
 *   -DSENTINEL_RESERVED (VMID) the sched-out sentinel aliases an
 *                       allocatable id (generation 1, index 1) so that
 *                       flush_context records it as a genuine reservation
 *                       (see README.md for why this is the real bug)
 *   -DSENTINEL_DEFERRED (ASID) the VMID sched-out sentinel combined with
 *                       the deferred flush policy
 * Benign variants (expected to pass; efficiency regressions only):
 *   -DSENTINEL_KEEP     flush_context treats the sentinel like 0 (keeps
 *                       the CPU's previous reservation)
 *   -DSCHEDOUT_ZERO     sched-out stores 0 instead of the sentinel
 *
 * Reachability probe: -DREACH asserts gen < MAXGEN after each rollover;
 * a violation proves that generation MAXGEN (two rollovers) is reached.
 *
 * Encoding: an id is gen*NUM + idx (0 = "no id"); gen starts at 1.
 */

#ifndef NCPU
#define NCPU	2
#endif
#ifndef NUM			/* number of ids per generation, index 0 reserved */
#ifdef PIN
#define NUM	5
#else
#define NUM	4
#endif
#endif
#ifndef NTASK
#ifdef PIN
#define NTASK	5
#else
#define NTASK	4
#endif
#endif
#ifndef MAXGEN
#define MAXGEN	3
#endif

#if defined(SENTINEL_DEFERRED)
#define POLICY_ASID
#define SCHEDOUT
#endif
#if defined(POLICY_VMID)
#define SCHEDOUT
#endif
#if !defined(POLICY_ASID) && !defined(POLICY_VMID)
#error "define POLICY_ASID or POLICY_VMID"
#endif

#ifdef SENTINEL_RESERVED
#define SENTINEL	(NUM + 1)	/* mutant: gen 1, index 1 (allocatable) */
#else
#define SENTINEL	(NUM)		/* VMID_FIRST_VERSION: gen 1, index 0 */
#endif

#define IDX(x)		((x) % NUM)
#define GEN(x)		((x) / NUM)
#define PINNED_TASK	0

byte gen = 1;			/* vmid_generation / asid_generation */
bool map[NUM];			/* vmid_map */
bool pinned_map[NUM];
byte act[NCPU];		/* per-CPU active_vmids (atomic) */
byte reserved[NCPU];		/* per-CPU reserved_vmids */
bool flush_pending[NCPU];	/* tlb_flush_pending (ASID policy) */
byte ctxid[NTASK];		/* kvm_vmid->id / mm->context.id */
byte cur_idx = 1;		/* function-static cur_idx */
bool lock;			/* cpu_vmid_lock */
byte rollovers;

/* hardware */
byte tlb[NCPU * NUM];		/* owner task+1 of (cpu, idx) entries, 0 empty */
byte running[NCPU];		/* task+1 whose translations the CPU may fill */
byte runid[NCPU];		/* id the CPU runs with */
byte pin_idx;

/*
 * Speculative fill: a CPU running task t with id may fill (idx(id) -> t)
 * at any time.  The model fills immediately and refills after every
 * flush, which is the maximal TLB content at every point, so any stale
 * entry conflict reachable by some fill schedule is reachable here.
 */
inline tlb_fill(cpu)
{
	if
	:: running[cpu] != 0 ->
		assert(tlb[cpu * NUM + IDX(runid[cpu])] == 0 ||
		       tlb[cpu * NUM + IDX(runid[cpu])] == running[cpu]);
		tlb[cpu * NUM + IDX(runid[cpu])] = running[cpu]
	:: else -> skip
	fi
}

inline local_flush(cpu)
{
	j = 0;
	do
	:: j < NUM -> tlb[cpu * NUM + j] = 0; j++
	:: else -> break
	od;
	j = 0;
	tlb_fill(cpu)
}

inline find_zero(from)
{
	i = from;
	do
	:: i < NUM && map[i] -> i++
	:: else -> break
	od
}

/*
 * new_vmid()/new_context(), called with the lock held, split in three
 * parts so that only accesses visible to lock-free fast paths of other
 * CPUs (generation, act[], ctxid[], TLBs) are separate steps:
 *   nc_pre:      reuse a free previous index / reserved hit / pinned /
 *                search from cur_idx
 *                -> st = 0 (id final), 1 (index i found), 2 (rollover)
 *   nc_rollover: generation bump, flush_context xchg loop (one step per
 *                CPU), flush, search from 1
 *   nc_set:      take index i
 */
inline nc_pre(t)
{
	g = gen;
	st = 1;
	if
	:: id != 0 ->
		newid = g * NUM + IDX(id);
		/*
		 * The previous index first: if it is free, no CPU has it
		 * reserved and it is not pinned (lib/asid.c's new_context()).
		 */
		if
		:: !map[IDX(id)] -> map[IDX(id)] = 1; id = newid; st = 0
		:: else ->
			/* check_update_reserved_asid: no early exit */
			hit = 0;
			i = 0;
			do
			:: i < NCPU ->
				if
				:: reserved[i] == id -> reserved[i] = newid; hit = 1
				:: else -> skip
				fi;
				i++
			:: else -> break
			od;
			i = 0;
			if
			:: hit -> id = newid; st = 0
#ifdef PIN
			:: !hit && t == PINNED_TASK -> id = newid; st = 0
#endif
			:: else -> skip
			fi
		fi
	:: else -> skip
	fi;
	if
	:: st != 0 ->
		find_zero(cur_idx);
		if
		:: i == NUM -> st = 2
		:: else -> skip
		fi
	:: else -> skip
	fi;
	newid = 0; hit = 0
}

inline xchg_active(n)
{
	tmp = act[n];
	act[n] = 0;
#ifndef NO_RESERVED
	if
	:: tmp == 0 -> tmp = reserved[n]
	:: else -> skip
	fi;
#endif
#ifdef SENTINEL_KEEP
	if
	:: tmp == SENTINEL -> tmp = reserved[n]
	:: else -> skip
	fi;
#endif
	map[IDX(tmp)] = 1;
	reserved[n] = tmp;
	tmp = 0
}

inline flush_and_search()
{
#ifndef NO_FLUSH
#ifdef POLICY_VMID
	/* broadcast kvm_call_hyp(__kvm_flush_vm_context) */
	k = 0;
	do
	:: k < NCPU -> local_flush(k); k++
	:: else -> break
	od;
	k = 0;
#else
	k = 0;
	do
	:: k < NCPU -> flush_pending[k] = 1; k++
	:: else -> break
	od;
	k = 0;
#endif
#endif
	/* more ids than CPUs (+pinned): always succeeds */
	find_zero(1);
	assert(i < NUM);
	st = 1
}

/*
 * Rollover.  Visible to other CPUs' lock-free fast paths: the generation
 * bump, and the xchg of *their* active slot.  So: step 1 = bump + map
 * reset + xchg of this CPU's own slot (no other CPU touches it); then
 * one step per other CPU; the flush is merged into the last step (a
 * flush only removes TLB entries, and the refill rule re-adds those of
 * running CPUs).
 */
inline nc_rollover()
{
	atomic {
		gen < MAXGEN;	/* bound: no rollover beyond generation MAXGEN */
		gen++;
		g = gen;
		rollovers++;
#ifdef REACH
		assert(gen < MAXGEN);
#endif
		/* flush_context: bitmap_zero / set_reserved_asid_bits */
		i = 0;
		do
		:: i < NUM -> map[i] = pinned_map[i]; i++
		:: else -> break
		od;
		i = 0;
		d = 0;
		xchg_active(c);
		if
		:: NCPU == 1 -> d = NCPU; flush_and_search()
		:: else -> skip
		fi
	}
	do
	:: d < NCPU && d == c -> d++
	:: d < NCPU && d != c ->
		atomic {
			xchg_active(d);
			d++;
			if
			:: d == NCPU || (d == NCPU - 1 && c == NCPU - 1) ->
				d = NCPU; flush_and_search()
			:: else -> skip
			fi
		}
	:: else -> d = 0; break
	od
}

inline nc_set()
{
	/* never hand out an index reserved for, or pinned to, another context */
	k = 0;
	do
	:: k < NCPU -> assert(reserved[k] == 0 || IDX(reserved[k]) != i); k++
	:: else -> break
	od;
	k = 0;
	assert(!pinned_map[i] && i != 0);
	map[i] = 1;
	cur_idx = i;
	id = g * NUM + i;
	i = 0
}

/* enter the context (cpu_switch_mm / guest entry) and check invariants */
inline enter(t)
{
	assert(id != 0 && IDX(id) != 0);		/* never run id 0 */
#ifdef PIN
	if
	:: t == PINNED_TASK -> assert(IDX(id) == pin_idx)
	:: else -> skip
	fi;
#endif
	d = 0;
	do
	:: d < NCPU ->
		if
		:: d != c && running[d] != 0 ->
			if
			:: running[d] == t + 1 ->
				/* one context => one id on running CPUs */
				assert(IDX(runid[d]) == IDX(id))
			:: else ->
				/* distinct running contexts => distinct ids */
				assert(IDX(runid[d]) != IDX(id))
			fi
		:: else -> skip
		fi;
		d++
	:: else -> break
	od;
	d = 0;
	running[c] = t + 1;
	runid[c] = id;
	tlb_fill(c);	/* no two contexts share an id in this TLB */
	id = 0; t = 0; old = 0; st = 0; g = 0
}

/* slow path: take the lock (may block), re-read the id, new_context */
inline slow_begin(t)
{
	!lock -> lock = 1;
	id = ctxid[t];
	if
	:: GEN(id) != gen -> nc_pre(t)
	:: else -> st = 0
	fi
}

proctype cpu(byte c)
{
	byte t, id, old, tmp, g, newid, i, j, k, d, st;
	bool hit, fp;

	do
	:: /*
	    * Step 1: [VMID: vcpu_put of the previous VM, i.e.
	    * kvm_arm_vmid_clear_active()], pick task t, fast-path reads of
	    * the id, of active and of the generation; if the fast path is
	    * not taken, take the lock and start the slow path.  Merging is
	    * equivalent: the generation is only written by a rollover under
	    * the lock, which zeroes active before writing any new-generation
	    * id, and the slow path re-reads everything under the lock.
	    */
		atomic {
#ifdef SCHEDOUT
			if
			:: running[c] != 0 ->
				running[c] = 0;
				runid[c] = 0;
#ifdef SCHEDOUT_ZERO
				act[c] = 0
#else
				act[c] = SENTINEL
#endif
			:: else -> skip
			fi;
#endif
			select(t : 0 .. NTASK - 1);
#ifndef SCHEDOUT
			t + 1 != running[c];
#endif
			id = ctxid[t];
			old = act[c];
			if
			:: old != 0 && GEN(id) == gen -> fp = 1
			:: else -> old = 0; slow_begin(t)
			fi
		}
		if
		:: fp ->
			/*
			 * Step 2: relaxed cmpxchg; on success enter at once (the
			 * enter is local to this CPU: a rollover in between sees
			 * the new value in its xchg either way); on a zero result
			 * fall into the slow path.
			 */
			atomic {
				fp = 0;
				tmp = act[c];
				if
				:: tmp == old -> act[c] = id
				:: else -> skip
				fi;
#ifdef NO_ZERO_CHECK
				tmp = 1;
#endif
				if
				:: tmp != 0 -> tmp = 0; enter(t); goto next
				:: else -> old = 0; slow_begin(t)
				fi
			}
		:: else -> skip
		fi;
		if
		:: st == 2 -> nc_rollover()
		:: else -> skip
		fi;
		/*
		 * Last step: set the id, [ASID: pending local flush], publish
		 * active, unlock, enter.  Merging the enter is equivalent: this
		 * CPU's TLB only gains the refill of what it is running, and a
		 * rollover elsewhere only touches it through a flush.
		 */
		atomic {
			if
			:: st == 1 -> nc_set()
			:: else -> skip
			fi;
			ctxid[t] = id;	/* atomic64_set(&kvm_vmid->id) */
#ifdef POLICY_ASID
			if
			:: flush_pending[c] -> flush_pending[c] = 0; local_flush(c)
			:: else -> skip
			fi;
#endif
			act[c] = id;
			lock = 0;
			enter(t)
		}
next:
		skip
	od
}

init {
	atomic {
#ifdef PIN
		/* arm64_mm_context_get() at init: pin task 0 */
		ctxid[PINNED_TASK] = NUM + 1;
		map[1] = 1;
		pinned_map[1] = 1;
		pin_idx = 1;
#endif
		byte n = 0;
		do
		:: n < NCPU -> run cpu(n); n++
		:: else -> break
		od
	}
}
