/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim.h - minimal userspace shim under which arch/arm64/kvm/vmid.c
 * (and, later, the shared allocator library) compiles unmodified on
 * x86-64.  Each pthread is a CPU; per-CPU variables are NR_CPUS arrays;
 * atomic64 ops are GCC __atomic builtins with relaxed ordering (which
 * TSan models exactly); raw spinlocks are pthread mutexes.
 */
#ifndef KSHIM_H
#define KSHIM_H

#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#ifndef NR_CPUS
#define NR_CPUS 4
#endif

typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;
typedef uint8_t u8;

#define __init
#define __ro_after_init
#define GFP_KERNEL 0
#define BITS_PER_LONG 64
#define BIT(n)		(1UL << (n))
#define GENMASK(h, l) \
	(((~0UL) - (1UL << (l)) + 1) & (~0UL >> (BITS_PER_LONG - 1 - (h))))

/* ---- CPUs ---- */
extern __thread int kshim_cpu;		/* set by the driver per thread */
extern int kshim_nr_cpus;		/* possible CPUs (<= NR_CPUS) */
#define smp_processor_id()	(kshim_cpu)
#define num_possible_cpus()	((unsigned int)kshim_nr_cpus)
#define for_each_possible_cpu(cpu) \
	for ((cpu) = 0; (cpu) < kshim_nr_cpus; (cpu)++)

/* ---- schedule fuzzing: KSHIM_YIELD=<pct> ---- */
extern int kshim_yield_pct;
extern __thread unsigned int kshim_seed;
static inline void kshim_maybe_yield(void)
{
	if (kshim_yield_pct && (int)(rand_r(&kshim_seed) % 100) < kshim_yield_pct)
		sched_yield();
}

/* ---- per-CPU ---- */
#define DEFINE_PER_CPU(type, name)	__typeof__(type) name[NR_CPUS]
#define DECLARE_PER_CPU(type, name)	extern __typeof__(type) name[NR_CPUS]
#define per_cpu(var, cpu)		((var)[(cpu)])
#define this_cpu_ptr(ptr)		(&(*(ptr))[smp_processor_id()])

/* ---- atomic64 (relaxed __atomic builtins) ---- */
typedef struct { s64 counter; } atomic64_t;
#define ATOMIC64_INIT(i)	{ (i) }

static inline s64 atomic64_read(const atomic64_t *v)
{
	kshim_maybe_yield();
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}
static inline void atomic64_set(atomic64_t *v, s64 i)
{
	kshim_maybe_yield();
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}
static inline s64 atomic64_xchg_relaxed(atomic64_t *v, s64 n)
{
	kshim_maybe_yield();
	return __atomic_exchange_n(&v->counter, n, __ATOMIC_RELAXED);
}
static inline s64 atomic64_cmpxchg_relaxed(atomic64_t *v, s64 o, s64 n)
{
	kshim_maybe_yield();
	__atomic_compare_exchange_n(&v->counter, &o, n, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return o;	/* old value, as the kernel's cmpxchg */
}
static inline bool atomic64_try_cmpxchg_relaxed(atomic64_t *v, s64 *o, s64 n)
{
	kshim_maybe_yield();
	return __atomic_compare_exchange_n(&v->counter, o, n, false,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
static inline s64 atomic64_add_return_relaxed(s64 i, atomic64_t *v)
{
	kshim_maybe_yield();
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_RELAXED);
}

/* ---- raw spinlock = pthread mutex (irqsave flags ignored) ---- */
typedef struct { pthread_mutex_t m; } raw_spinlock_t;
#define DEFINE_RAW_SPINLOCK(x)	raw_spinlock_t x = { PTHREAD_MUTEX_INITIALIZER }
#define raw_spin_lock_irqsave(l, f) \
	do { (void)(f); kshim_maybe_yield(); pthread_mutex_lock(&(l)->m); } while (0)
#define raw_spin_unlock_irqrestore(l, f) \
	do { (void)(f); pthread_mutex_unlock(&(l)->m); } while (0)
#define raw_spin_lock(l)	pthread_mutex_lock(&(l)->m)
#define raw_spin_unlock(l)	pthread_mutex_unlock(&(l)->m)

/* ---- bitmaps (non-atomic, used under the lock) ---- */
#define BITS_TO_LONGS(n)	(((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
static inline void __set_bit(unsigned long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] |= 1UL << (nr % BITS_PER_LONG);
}
static inline void __clear_bit(unsigned long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] &= ~(1UL << (nr % BITS_PER_LONG));
}
static inline bool test_bit(unsigned long nr, const unsigned long *addr)
{
	return (addr[nr / BITS_PER_LONG] >> (nr % BITS_PER_LONG)) & 1;
}
static inline bool __test_and_set_bit(unsigned long nr, unsigned long *addr)
{
	bool old = test_bit(nr, addr);

	__set_bit(nr, addr);
	return old;
}
static inline void bitmap_zero(unsigned long *dst, unsigned long nbits)
{
	memset(dst, 0, BITS_TO_LONGS(nbits) * sizeof(unsigned long));
}
static inline void bitmap_copy(unsigned long *dst, const unsigned long *src,
			       unsigned long nbits)
{
	memcpy(dst, src, BITS_TO_LONGS(nbits) * sizeof(unsigned long));
}
static inline unsigned long find_next_zero_bit(const unsigned long *addr,
					       unsigned long size,
					       unsigned long offset)
{
	for (; offset < size; offset++)
		if (!test_bit(offset, addr))
			return offset;
	return size;
}
static inline unsigned long find_next_bit(const unsigned long *addr,
					  unsigned long size,
					  unsigned long offset)
{
	for (; offset < size; offset++)
		if (test_bit(offset, addr))
			return offset;
	return size;
}
static inline unsigned long *bitmap_zalloc(unsigned int nbits, int gfp)
{
	(void)gfp;
	return calloc(BITS_TO_LONGS(nbits), sizeof(unsigned long));
}
static inline void bitmap_free(const unsigned long *p) { free((void *)p); }

/* ---- diagnostics ---- */
extern int kshim_warns;
#define WARN_ON(cond) ({						\
	int __c = !!(cond);						\
	if (__c) {							\
		fprintf(stderr, "WARNING: %s:%d: WARN_ON(%s)\n",	\
			__FILE__, __LINE__, #cond);			\
		__atomic_add_fetch(&kshim_warns, 1, __ATOMIC_RELAXED);	\
	}								\
	__c; })
#define WARN_ON_ONCE(c)	WARN_ON(c)
#define pr_info(...)	printf(__VA_ARGS__)

/* ---- KVM bits used by vmid.c ---- */
struct kvm_vmid { atomic64_t id; };
extern unsigned int kshim_vmid_bits;
static inline unsigned int kvm_get_vmid_bits(void) { return kshim_vmid_bits; }
/* broadcast TLB flush (hypercall), implemented by the test driver */
void __kvm_flush_vm_context(void);
#define kvm_call_hyp(f, ...)	f(__VA_ARGS__)

/* prototypes normally in asm/kvm_host.h */
extern unsigned int kvm_arm_vmid_bits;
int kvm_arm_vmid_alloc_init(void);
void kvm_arm_vmid_alloc_free(void);
void kvm_arm_vmid_update(struct kvm_vmid *kvm_vmid);
void kvm_arm_vmid_clear_active(void);

#endif /* KSHIM_H */
