// SPDX-License-Identifier: GPL-2.0
/*
 * Host-only KUnit case of the allocator's initialisation, built with the
 * suite by kunit_check.sh: the kernel cannot make a chosen GFP_KERNEL
 * allocation fail without global fault-injection knobs, the shim can
 * (kshim_alloc_fail_nth). Each allocation of __asid_allocator_init() is
 * failed in turn:
 *   - the ID map (which holds the pinned map too), the per-CPU active and
 *     reserved slots: -ENOMEM, with nothing left allocated;
 *   - the tables of the ID alias check: the instance works without the
 *     check, pinning included, and says so;
 * and the users' setup (context.c, vmid.c) returns the fatal failures.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>

#include <asm/asid.h>

static void asid_host_flush(struct asid_info *info)
{
}

static void asid_host_init_alloc_failures(struct kunit *test)
{
	static struct lock_class_key key;
	unsigned int fatal = 0, degraded = 0, n;
	struct asid_info info;
	bool done = false;
	int ret;

	for (n = 1; n <= 64 && !done; n++) {
		bool hit;

		kshim_alloc_fail_nth = n;
		ret = __asid_allocator_init(&info, 8, 1 << 8, asid_host_flush,
					    true, &key, "asid_host.lock");
		hit = kshim_alloc_fail_nth == 0;
		kshim_alloc_fail_nth = 0;

		if (!hit) {
			/* Fewer than n allocations: all of them succeeded */
			KUNIT_EXPECT_EQ(test, ret, 0);
			KUNIT_EXPECT_NOT_NULL(test, info.debug);
			done = true;
		} else if (ret) {
			KUNIT_EXPECT_EQ(test, ret, -ENOMEM);
			KUNIT_EXPECT_NULL(test, info.map);
			KUNIT_EXPECT_NULL(test, info.pinned_map);
			KUNIT_EXPECT_NULL(test, info.active);
			KUNIT_EXPECT_NULL(test, info.reserved);
			fatal++;
			continue;
		} else {
			/* Only the alias check may be missing */
			KUNIT_EXPECT_NULL(test, info.debug);
			degraded++;
		}

		/* A working instance: the map and the pinned map exist */
		KUNIT_EXPECT_NOT_NULL(test, info.map);
		KUNIT_EXPECT_NOT_NULL(test, info.pinned_map);
		KUNIT_EXPECT_NOT_NULL(test, info.active);
		KUNIT_EXPECT_NOT_NULL(test, info.reserved);
		if (info.map && info.pinned_map) {
			atomic64_t id = ATOMIC64_INIT(0);
			refcount_t pinned = { 0 };

			asid_allocator_enable_pinning(&info, NUM_CTXT_ASIDS(&info));
			KUNIT_EXPECT_NE(test, asid_context_pinned_get(&info, &id,
								      &pinned), 0);
			KUNIT_EXPECT_TRUE(test, test_bit(atomic64_read(&id) & 0xff,
							 info.pinned_map));
			asid_context_pinned_put(&info, &id, &pinned);
		}
		asid_allocator_free(&info);
	}

	KUNIT_EXPECT_TRUE_MSG(test, done, "more than 64 allocations");

	/* The users' setup returns the failure of each fatal allocation */
	for (n = 1; n <= 3; n++) {
		kshim_alloc_fail_nth = n;
		KUNIT_EXPECT_EQ(test, arm64_asid_init_info(&info, 8, true),
				-ENOMEM);
		kshim_alloc_fail_nth = n;
		KUNIT_EXPECT_EQ(test, kvm_arm_vmid_init_info(&info, 8), -ENOMEM);
	}
	kshim_alloc_fail_nth = 0;
	/* The map, the active and the reserved slots */
	KUNIT_EXPECT_EQ(test, fatal, 3);
	/* The alias check's array and one table per possible CPU */
	KUNIT_EXPECT_EQ(test, degraded, 1 + num_possible_cpus());
}

static struct kunit_case asid_host_init_cases[] = {
	KUNIT_CASE(asid_host_init_alloc_failures),
	{}
};

static struct kunit_suite asid_host_init_suite = {
	.name = "asid_host_init",
	.test_cases = asid_host_init_cases,
};
kunit_test_suite(asid_host_init_suite);
