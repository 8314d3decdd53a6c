/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim_cpumask.h - cpumask_t of NR_CPUS bits, for builds with more
 * possible CPUs than bits in a long (cost-sweep.sh: up to 512). kshim.h
 * includes it in place of its single-word cpumask when
 * NR_CPUS > BITS_PER_LONG, after the bitmap helpers it uses. As in the
 * kernel (bitmap_fill() of nr_cpumask_bits), cpumask_setall() sets the
 * bits of the possible CPUs a word at a time, and cpumask_empty() looks
 * at those words.
 */
#ifndef KSHIM_CPUMASK_H
#define KSHIM_CPUMASK_H

typedef struct { unsigned long bits[BITS_TO_LONGS(NR_CPUS)]; } cpumask_t;

static inline unsigned int kshim_cpumask_words(void)
{
	return BITS_TO_LONGS((unsigned int)kshim_nr_cpus);
}
static inline void cpumask_clear(cpumask_t *m)
{
	memset(m->bits, 0, sizeof(m->bits));
}
static inline void cpumask_setall(cpumask_t *m)
{
	unsigned int i, n = kshim_cpumask_words(), tail = kshim_nr_cpus % BITS_PER_LONG;

	for (i = 0; i < n; i++)
		m->bits[i] = ~0UL;
	if (tail)
		m->bits[n - 1] = (1UL << tail) - 1;
}
static inline bool cpumask_test_cpu(int cpu, const cpumask_t *m)
{
	return test_bit(cpu, m->bits);
}
static inline bool cpumask_empty(const cpumask_t *m)
{
	unsigned int i, n = kshim_cpumask_words();

	for (i = 0; i < n; i++)
		if (m->bits[i])
			return false;
	return true;
}
static inline bool cpumask_test_and_clear_cpu(int cpu, cpumask_t *m)
{
	bool r = test_bit(cpu, m->bits);

	__clear_bit(cpu, m->bits);
	return r;
}

#endif /* KSHIM_CPUMASK_H */
