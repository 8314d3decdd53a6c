/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definitions of the shim's global state, shared by the harness drivers
 * (vmid_stress.c, vmid_cost.c, kunit_host.c). Include exactly once, from
 * the driver, after defining KSHIM_DEFAULT_CPUS and
 * KSHIM_DEFAULT_VMID_BITS.
 */
#ifndef KSHIM_GLOBALS_H
#define KSHIM_GLOBALS_H

__thread int kshim_cpu;
__thread unsigned int kshim_seed;
__thread int kshim_alloc_fail_nth;
int kshim_nr_cpus = KSHIM_DEFAULT_CPUS;
int kshim_yield_pct;
int kshim_warns;
unsigned int kshim_vmid_bits = KSHIM_DEFAULT_VMID_BITS;
unsigned long kshim_trace_hits;
int (*kshim_early_param_fn)(char *);
const char *kshim_early_param_name;
bool kshim_kvm_initialised = true;
bool kshim_kpti;
u64 kshim_mmfr0;

#endif
