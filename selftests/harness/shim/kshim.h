/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim.h - minimal userspace shim under which the stock
 * arch/arm64/kvm/vmid.c and the series' arch/arm64/lib/asid.c (+ its
 * asm/asid.h, asm/asid_trace.h, the thin vmid.c, arch/arm64/mm/context.c
 * and the KUnit suite arch/arm64/lib/asid_kunit.c, see kshim_kunit.h)
 * compile unmodified on x86-64.  Each pthread is a CPU; static per-CPU variables are NR_CPUS
 * arrays, alloc_percpu() is calloc(NR_CPUS); atomic64 ops are GCC
 * __atomic builtins with relaxed ordering (which TSan models exactly);
 * raw spinlocks are pthread mutexes.  The one-line headers under linux/,
 * asm/, kunit/ and trace/ all include this file.
 */
#ifndef KSHIM_H
#define KSHIM_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#ifndef NR_CPUS
#define NR_CPUS 4
#endif

typedef unsigned long long u64;	/* as in the kernel (%llx) */
typedef long long s64;
typedef uint32_t u32;
typedef uint8_t u8;

#define __init
#define __initdata
#define __ro_after_init
#define __percpu
#ifndef __always_inline
#define __always_inline	inline __attribute__((always_inline))
#endif
#define EXPORT_SYMBOL(s)
#define EXPORT_SYMBOL_GPL(s)
#define GFP_KERNEL 0
#define BITS_PER_LONG 64
#define BIT(n)		(1UL << (n))
#define GENMASK(h, l) \
	(((~0UL) - (1UL << (l)) + 1) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define BIT_ULL(n)	(1ULL << (n))
#define GENMASK_ULL(h, l) \
	(((~0ULL) - (1ULL << (l)) + 1) & (~0ULL >> (63 - (h))))
#define U32_MAX		((u32)~0U)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define fallthrough	__attribute__((__fallthrough__))
#define asmlinkage
#define max_t(t, a, b)	({ t __a = (a), __b = (b); __a > __b ? __a : __b; })
#define min_t(t, a, b)	({ t __a = (a), __b = (b); __a < __b ? __a : __b; })

/*
 * IS_ENABLED() as in include/linux/kconfig.h, for options given as
 * -DCONFIG_FOO (=1); no =m.
 */
#define __ARG_PLACEHOLDER_1 0,
#define __take_second_arg(__ignored, val, ...) val
#define __is_defined(x)			___is_defined(x)
#define ___is_defined(val)		____is_defined(__ARG_PLACEHOLDER_##val)
#define ____is_defined(arg1_or_junk)	__take_second_arg(arg1_or_junk 1, 0)
#define IS_ENABLED(option)		__is_defined(option)

/* kunit/visibility.h: -DCONFIG_KUNIT for the KUnit build (kshim_kunit.h) */
#if IS_ENABLED(CONFIG_KUNIT)
#define VISIBLE_IF_KUNIT
#else
#define VISIBLE_IF_KUNIT static
#endif
#define EXPORT_SYMBOL_IF_KUNIT(s)

/* ---- CPUs ---- */
extern __thread int kshim_cpu;		/* set by the driver per thread */
extern int kshim_nr_cpus;		/* possible CPUs (<= NR_CPUS) */
#define smp_processor_id()	(kshim_cpu)
#define raw_smp_processor_id()	(kshim_cpu)
#define num_possible_cpus()	((unsigned int)kshim_nr_cpus)
#define nr_cpu_ids		((unsigned int)kshim_nr_cpus)
#define for_each_possible_cpu(cpu) \
	for ((cpu) = 0; (cpu) < kshim_nr_cpus; (cpu)++)
#define preempt_disable()	do { } while (0)
#define preempt_enable()	do { } while (0)
/* linux/cache.h */
#define ____cacheline_aligned_in_smp	__attribute__((__aligned__(64)))
#define cond_resched()		do { } while (0)
#define get_cpu()		({ preempt_disable(); smp_processor_id(); })
#define put_cpu()		preempt_enable()
/* work_on_cpu(): run @fn as CPU @cpu, in the calling thread */
static inline long work_on_cpu(int cpu, long (*fn)(void *), void *arg)
{
	int saved = kshim_cpu;
	long ret;

	kshim_cpu = cpu;
	ret = fn(arg);
	kshim_cpu = saved;
	return ret;
}

/* ---- schedule fuzzing: KSHIM_YIELD=<pct> ---- */
extern int kshim_yield_pct;
extern __thread unsigned int kshim_seed;
static inline void kshim_maybe_yield(void)
{
#ifndef KSHIM_NO_YIELD	/* cost.sh: keep the fuzzing hook out of the counts */
	if (kshim_yield_pct && (int)(rand_r(&kshim_seed) % 100) < kshim_yield_pct)
		sched_yield();
#endif
}

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
/*
 * printk: to stderr, so that a driver's stdout (KTAP) stays clean; not
 * format-checked, for the kernel's %ps.
 */
#include <stdarg.h>
static inline void kshim_printk(const char *lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(lvl, stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
#define pr_info(...)	kshim_printk("info: ", __VA_ARGS__)
#define pr_warn(...)	kshim_printk("warn: ", __VA_ARGS__)
#define pr_err(...)	kshim_printk("err: ", __VA_ARGS__)
#define pr_crit(...)	kshim_printk("crit: ", __VA_ARGS__)
#define printk_deferred_enter()	do { } while (0)
#define printk_deferred_exit()	do { } while (0)
#define panic(...)	({ kshim_printk("panic: ", __VA_ARGS__); abort(); })

/* ---- per-CPU ---- */
#define DEFINE_PER_CPU(type, name)	__typeof__(type) name[NR_CPUS]
#define DECLARE_PER_CPU(type, name)	extern __typeof__(type) name[NR_CPUS]
#define per_cpu(var, cpu)		((var)[(cpu)])
/*
 * per_cpu_ptr()/this_cpu_ptr() take either &static_percpu_array (a pointer
 * to an NR_CPUS array, stock vmid.c) or an alloc_percpu() pointer (to CPU
 * 0's element of an NR_CPUS array, lib/asid.c).  All _Generic branches are
 * type-checked, hence the casts; only the selected one is evaluated.
 */
#define per_cpu_ptr(ptr, cpu) _Generic((ptr),				\
	atomic64_t (*)[NR_CPUS]: &(*(atomic64_t (*)[NR_CPUS])(ptr))[cpu], \
	u64 (*)[NR_CPUS]: &(*(u64 (*)[NR_CPUS])(ptr))[cpu],		\
	default: (ptr) + (cpu))
#define this_cpu_ptr(ptr)		per_cpu_ptr(ptr, smp_processor_id())
/*
 * Allocation failure injection: with kshim_alloc_fail_nth = n > 0, the
 * n-th allocation from then on fails (and the count drops to 0).
 */
extern __thread int kshim_alloc_fail_nth;
static inline void *kshim_calloc(size_t n, size_t size)
{
	if (kshim_alloc_fail_nth > 0 && --kshim_alloc_fail_nth == 0)
		return NULL;
	return calloc(n, size);
}
#define alloc_percpu(type)	((__typeof__(type) *)kshim_calloc(NR_CPUS, sizeof(type)))
#define free_percpu(p)		free((void *)(p))

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

/* ---- atomic_t, atomic_long_t (debug alias check), barriers ---- */
typedef struct { int counter; } atomic_t;
typedef struct { long counter; } atomic_long_t;
static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}
static inline void atomic_set(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}
static inline void atomic_inc(atomic_t *v)
{
	__atomic_add_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}
static inline long atomic_long_read(const atomic_long_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}
static inline void atomic_long_set(atomic_long_t *v, long i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}
static inline void atomic_long_inc(atomic_long_t *v)
{
	__atomic_add_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}
#define smp_mb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb()	__atomic_thread_fence(__ATOMIC_ACQUIRE)

/* ---- slab ---- */
#define kcalloc(n, size, gfp)	kshim_calloc((n), (size))
#define kvcalloc(n, size, gfp)	kshim_calloc((n), (size))
#define kzalloc(size, gfp)	kshim_calloc(1, (size))
#define kfree(p)		free((void *)(p))
#define kvfree(p)		free((void *)(p))

/*
 * ---- raw spinlock = error-checking pthread mutex (irqsave flags ignored):
 * an unlock of a lock the thread does not hold, or a second lock by its
 * holder, aborts, as CONFIG_DEBUG_SPINLOCK would report it ----
 */
typedef struct { pthread_mutex_t m; } raw_spinlock_t;
/* static ones (stock vmid.c) are plain mutexes: no glibc initialiser without _GNU_SOURCE */
#define DEFINE_RAW_SPINLOCK(x)	raw_spinlock_t x = { PTHREAD_MUTEX_INITIALIZER }
static inline void kshim_lock_check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "BUG: raw spinlock %s: error %d\n", what, err);
		abort();
	}
}
static inline void kshim_lock_init(raw_spinlock_t *l)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
#ifndef KSHIM_PLAIN_LOCKS	/* the benchmarks: the same mutex as stock's */
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
#endif
	pthread_mutex_init(&l->m, &a);
	pthread_mutexattr_destroy(&a);
}
#define raw_spin_lock_irqsave(l, f) \
	do { (void)(f); kshim_maybe_yield(); \
	     kshim_lock_check(pthread_mutex_lock(&(l)->m), "lock"); } while (0)
#define raw_spin_unlock_irqrestore(l, f) \
	do { (void)(f); \
	     kshim_lock_check(pthread_mutex_unlock(&(l)->m), "unlock"); } while (0)
#define raw_spin_lock_init(l)	kshim_lock_init(l)
#define raw_spin_lock(l)	kshim_lock_check(pthread_mutex_lock(&(l)->m), "lock")
#define raw_spin_unlock(l)	kshim_lock_check(pthread_mutex_unlock(&(l)->m), "unlock")

/* ---- lockdep (no-op) ---- */
struct lock_class_key { int dummy; };
#define lockdep_set_class_and_name(l, key, name) \
	do { (void)(l); (void)(key); (void)(name); } while (0)

/* ---- refcount_t (relaxed atomics; saturation not modelled) ---- */
typedef struct { int refs; } refcount_t;
static inline unsigned int refcount_read(const refcount_t *r)
{
	return __atomic_load_n(&r->refs, __ATOMIC_RELAXED);
}
static inline void refcount_set(refcount_t *r, int n)
{
	__atomic_store_n(&r->refs, n, __ATOMIC_RELAXED);
}
static inline bool refcount_inc_not_zero(refcount_t *r)
{
	int o = __atomic_load_n(&r->refs, __ATOMIC_RELAXED);

	do {
		if (!o)
			return false;
	} while (!__atomic_compare_exchange_n(&r->refs, &o, o + 1, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}
static inline bool refcount_dec_and_test(refcount_t *r)
{
	int o = __atomic_fetch_sub(&r->refs, 1, __ATOMIC_RELEASE);

	if (WARN_ON(o <= 0))
		return false;
	return o == 1;
}

static inline bool is_power_of_2(unsigned long n)
{
	return n != 0 && ((n & (n - 1)) == 0);
}
/* linux/log2.h: ceil(log2(n)), 0 for n <= 1 */
static inline int order_base_2(unsigned long n)
{
	return n <= 1 ? 0 : 64 - __builtin_clzl(n - 1);
}

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
/* word at a time, like lib/find_bit.c (keeps cost.sh's figures sane) */
static inline unsigned long find_next_zero_bit(const unsigned long *addr,
					       unsigned long size,
					       unsigned long offset)
{
	while (offset < size) {
		unsigned long w = ~addr[offset / BITS_PER_LONG] >>
				  (offset % BITS_PER_LONG);

		if (w) {
			offset += __builtin_ctzl(w);
			return offset < size ? offset : size;
		}
		offset = (offset | (BITS_PER_LONG - 1)) + 1;
	}
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
	return kshim_calloc(BITS_TO_LONGS(nbits), sizeof(unsigned long));
}
static inline void bitmap_free(const unsigned long *p) { free((void *)p); }
static inline void bitmap_clear(unsigned long *map, unsigned int start,
				unsigned int nbits)
{
	for (; nbits; nbits--, start++)
		__clear_bit(start, map);
}
static inline bool bitmap_subset(const unsigned long *a,
				 const unsigned long *b, unsigned int nbits)
{
	unsigned int i;

	for (i = 0; i < nbits; i++)
		if (test_bit(i, a) && !test_bit(i, b))
			return false;
	return true;
}
static inline unsigned int bitmap_weight(const unsigned long *map,
					 unsigned int nbits)
{
	unsigned int i, w = 0;

	for (i = 0; i < nbits; i++)
		w += test_bit(i, map);
	return w;
}

#if NR_CPUS > BITS_PER_LONG	/* cost-sweep.sh: up to 512 CPUs */
#include "kshim_cpumask.h"
#else
/* ---- cpumask (only what lib/asid.c uses; single word) ---- */
typedef struct { unsigned long bits[1]; } cpumask_t;
static inline void cpumask_clear(cpumask_t *m) { m->bits[0] = 0; }
static inline void cpumask_setall(cpumask_t *m)
{
	m->bits[0] = kshim_nr_cpus >= BITS_PER_LONG ? ~0UL :
		     (1UL << kshim_nr_cpus) - 1;
}
static inline bool cpumask_test_cpu(int cpu, const cpumask_t *m)
{
	return test_bit(cpu, m->bits);
}
static inline bool cpumask_empty(const cpumask_t *m)
{
	return !m->bits[0];
}
static inline bool cpumask_test_and_clear_cpu(int cpu, cpumask_t *m)
{
	bool r = test_bit(cpu, m->bits);

	__clear_bit(cpu, m->bits);
	return r;
}
#endif /* NR_CPUS > BITS_PER_LONG */

/* ---- tracepoints: TRACE_EVENT(name, ...) defines trace_name() which
 * only counts calls (kshim_trace_hits, defined by the driver) ---- */
extern unsigned long kshim_trace_hits;
#define TP_PROTO(...)		__VA_ARGS__
#define TP_ARGS(...)		__VA_ARGS__
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)		\
	static inline void trace_##name(proto)				\
	{ __atomic_add_fetch(&kshim_trace_hits, 1, __ATOMIC_RELAXED); }

/* ---- misc used by the CONFIG_ARM64_DEBUG_ASID_BITS code ---- */
static inline int kstrtou32(const char *s, unsigned int base, u32 *res)
{
	char *end;
	unsigned long v = strtoul(s, &end, base);

	if (!*s || *end || v > 0xffffffffUL)
		return -EINVAL;
	*res = v;
	return 0;
}
/* early_param(): registers the handler; the driver may call it */
extern int (*kshim_early_param_fn)(char *);
extern const char *kshim_early_param_name;
#define early_param(str, fn)						\
	static __attribute__((constructor)) void kshim_ep_##fn(void)	\
	{ kshim_early_param_name = str; kshim_early_param_fn = fn; }

/* ---- KVM bits used by vmid.c ---- */
/* pinned: used by the series' vmid.c only; harmless for stock */
struct kvm_vmid { atomic64_t id; refcount_t pinned; };
extern unsigned int kshim_vmid_bits;
static inline unsigned int kvm_get_vmid_bits(void) { return kshim_vmid_bits; }
/* broadcast TLB flush (hypercall), implemented by the test driver */
void __kvm_flush_vm_context(void);
#define kvm_call_hyp(f, ...)	f(__VA_ARGS__)
/* asm/virt.h: whether KVM initialised (at EL2), set by the driver */
extern bool kshim_kvm_initialised;
static inline bool is_kvm_arm_initialised(void) { return kshim_kvm_initialised; }

/* prototypes normally in asm/kvm_host.h */
extern unsigned int kvm_arm_vmid_bits;
int kvm_arm_vmid_alloc_init(void);
void kvm_arm_vmid_alloc_free(void);
void kvm_arm_vmid_update(struct kvm_vmid *kvm_vmid);
/* linux/kvm_host.h and asm/kvm_mmu.h bits of the series' vmid.c: the VM
 * of a stage-2 MMU is only needed when the (compiled-out) debug alias
 * check fires, so the harness never calls these. */
#define kvm_info(fmt, ...)	printf("kvm [0]: " fmt, ##__VA_ARGS__)
struct kvm_s2_mmu { struct kvm_vmid vmid; };
struct kvm_arch { struct kvm_s2_mmu mmu; };
struct kvm { struct kvm_arch arch; };
#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif
static inline struct kvm *kvm_s2_mmu_to_kvm(struct kvm_s2_mmu *mmu) { abort(); }
static inline void kvm_vm_bugged(struct kvm *kvm) { abort(); }
void kvm_arm_vmid_clear_active(void);
unsigned long kvm_arm_pinned_vmid_get(struct kvm *kvm);
void kvm_arm_pinned_vmid_put(struct kvm *kvm);
void kvm_arm_vmid_release(struct kvm *kvm);

/* ---- TLB maintenance: models implemented by the driver ---- */
/* asm/tlbflush.h: invalidate the calling CPU's TLB */
void kshim_local_flush_tlb_all(void);
#define local_flush_tlb_all()	kshim_local_flush_tlb_all()

/* ---- arm64 bits used by arch/arm64/mm/context.c ---- */
typedef u64 phys_addr_t;
typedef struct { u64 pgd; } pgd_t;
typedef struct {
	atomic64_t	id;
	refcount_t	pinned;
} mm_context_t;
struct mm_struct { mm_context_t context; pgd_t *pgd; };
#define ASID(mm)	((unsigned long)(atomic64_read(&(mm)->context.id) & 0xffff))
/* ID_AA64MMFR0_EL1.ASIDBits, as read_cpuid() returns it */
extern u64 kshim_mmfr0;
#define ID_AA64MMFR0_EL1_ASIDBITS_SHIFT	4
#define ID_AA64MMFR0_EL1_ASIDBITS_8	0
#define ID_AA64MMFR0_EL1_ASIDBITS_16	2
#define read_cpuid(reg)			(kshim_mmfr0)
static inline unsigned int cpuid_feature_extract_unsigned_field(u64 r, int s)
{
	return (r >> s) & 0xf;
}
/* arm64_kernel_unmapped_at_el0(): KPTI, set by the driver */
extern bool kshim_kpti;
static inline bool arm64_kernel_unmapped_at_el0(void) { return kshim_kpti; }
static inline bool system_supports_cnp(void) { return false; }
static inline bool system_uses_ttbr0_pan(void) { return false; }
static inline void cpu_set_reserved_ttbr0(void) { }
static inline void cpu_set_reserved_ttbr0_nosync(void) { }
static inline void arm64_apply_bp_hardening(void) { }
static inline void cpu_switch_mm(pgd_t *pgd, struct mm_struct *mm) { }
static inline void cpu_panic_kernel(void) { abort(); }
#define TTBR_ASID_MASK		(0xffffULL << 48)
#define TTBR_CNP_BIT		(1ULL << 0)
#define phys_to_ttbr(p)		((u64)(p))
#define FIELD_PREP(mask, val) \
	(((u64)(val) << __builtin_ctzll(mask)) & (mask))
#define read_sysreg(r)		((u64)0)
#define write_sysreg(v, r)	((void)(v))
#define isb()			do { } while (0)
/* alternatives: the default instructions ("nop"s assemble on x86 too) */
#define ALTERNATIVE(oldinstr, newinstr, cap)	oldinstr
#define arch_initcall(fn) \
	static int (*const __kshim_initcall_##fn)(void) __attribute__((unused)) = fn
#define early_initcall(fn)	arch_initcall(fn)

#endif /* KSHIM_H */
