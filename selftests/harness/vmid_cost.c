// SPDX-License-Identifier: GPL-2.0
/*
 * vmid_cost.c - single-threaded cost driver for cost.sh (callgrind), linked
 * like vmid_stress.c against the stock vmid.c or the series' lib/asid.c +
 * vmid.c, built with -O2 -DKSHIM_NO_YIELD and no sanitizer.  CPU 0 of
 * NCPU possible CPUs does all the calls.
 *
 *   vmid_cost fast N   one update to allocate, then N updates of the same
 *                      VM with a current VMID: pure fast path (checked: no
 *                      rollover, VMID unchanged)
 *   vmid_cost roll M   round-robin updates over 2^VMID_BITS VMs (more VMs
 *                      than IDs) until M rollovers happened
 *
 * Env: VMID_BITS (default 8), NCPU (default 4).
 * Prints "calls=<n> rollovers=<m>"; exit 0 on success, 1 on a failed check.
 */
#include "shim/kshim.h"

#define KSHIM_DEFAULT_CPUS	NR_CPUS
#define KSHIM_DEFAULT_VMID_BITS	8
#include "shim/kshim_globals.h"

static unsigned long nr_flush;

/* the broadcast flush: nothing to model here, just count */
__attribute__((noinline)) void __kvm_flush_vm_context(void)
{
	nr_flush++;
	__asm__ volatile("" ::: "memory");
}

static struct kvm_vmid vms[1 << 16];

int main(int argc, char **argv)
{
	unsigned long n, calls = 0, i;
	const char *e;

	if (argc != 3 || (strcmp(argv[1], "fast") && strcmp(argv[1], "roll"))) {
		fprintf(stderr, "usage: %s fast|roll <count>\n", argv[0]);
		return 1;
	}
	n = strtoul(argv[2], NULL, 0);
	if ((e = getenv("VMID_BITS")))
		kshim_vmid_bits = atoi(e);
	if ((e = getenv("NCPU")))
		kshim_nr_cpus = atoi(e);
	if (kshim_vmid_bits < 2 || kshim_vmid_bits > 16 ||
	    kshim_nr_cpus < 1 || kshim_nr_cpus > NR_CPUS) {
		fprintf(stderr, "bad VMID_BITS/NCPU\n");
		return 1;
	}
	kshim_cpu = 0;
	if (kvm_arm_vmid_alloc_init() || kvm_arm_vmid_bits != kshim_vmid_bits) {
		fprintf(stderr, "init failed\n");
		return 1;
	}

	if (!strcmp(argv[1], "fast")) {
		u64 id;

		kvm_arm_vmid_update(&vms[0]);		/* slow: allocate */
		id = atomic64_read(&vms[0].id);
		for (i = 0; i < n; i++)
			kvm_arm_vmid_update(&vms[0]);
		calls = n + 1;
		if (nr_flush || atomic64_read(&vms[0].id) != id || !id) {
			fprintf(stderr, "FAIL: fast path run changed the VMID or rolled over\n");
			return 1;
		}
	} else {
		unsigned long nvm = 1UL << kshim_vmid_bits;

		for (i = 0; nr_flush < n; i++, calls++) {
			kvm_arm_vmid_update(&vms[i % nvm]);
			if (calls > 2 * (n + 1) * nvm) {
				fprintf(stderr, "FAIL: no rollover after %lu calls\n", calls);
				return 1;
			}
		}
	}
	kvm_arm_vmid_alloc_free();
	printf("calls=%lu rollovers=%lu warns=%d\n", calls, nr_flush, kshim_warns);
	return kshim_warns ? 1 : 0;
}
