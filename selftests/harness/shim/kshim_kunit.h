/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim_kunit.h - the part of the KUnit API (include/kunit/test.h) that
 * arch/arm64/lib/asid_kunit.c uses, for building the suite on x86-64
 * against kshim.h with the runner in ../kunit_host.c, which prints KTAP
 * like the kernel's executor.
 *
 * Expectations record a failure and go on; assertions (and kunit_skip())
 * also end the case, with a longjmp() back to the runner, which then runs
 * the case's deferred actions (kunit_add_action_or_reset()) and frees its
 * kunit_kzalloc()/kunit_kcalloc() memory, newest first, as KUnit does.
 * Values in failure messages are printed as signed and unsigned 64-bit
 * integers (pointers as integers): no kunit_assert formatting.
 */
#ifndef KSHIM_KUNIT_H
#define KSHIM_KUNIT_H

#include "kshim.h"
#include <setjmp.h>

struct kunit_resource_node;

enum kunit_status { KUNIT_SUCCESS, KUNIT_FAILURE, KUNIT_SKIPPED };

struct kunit {
	const char			*name;
	enum kunit_status		status;
	char				status_comment[256];
	jmp_buf				abort;
	struct kunit_resource_node	*resources;	/* newest first */
	void				*priv;
};

struct kunit_case {
	void		(*run_case)(struct kunit *test);
	const char	*name;
};

struct kunit_suite {
	const char		*name;
	struct kunit_case	*test_cases;
	int			(*init)(struct kunit *test);
	void			(*exit)(struct kunit *test);
};

#define KUNIT_CASE(fn)	{ .run_case = fn, .name = #fn }

/* kunit_test_suite(): register with the runner (kunit_host.c) */
void kshim_kunit_register(struct kunit_suite *suite);
#define kunit_test_suite(s)						\
	static __attribute__((constructor)) void kshim_register_##s(void) \
	{ kshim_kunit_register(&(s)); }
#define MODULE_DESCRIPTION(s)
#define MODULE_LICENSE(s)
#define MODULE_IMPORT_NS(ns)

typedef void (kunit_action_t)(void *);
int kunit_add_action_or_reset(struct kunit *test, kunit_action_t *action,
			      void *ctx);
void *kunit_kzalloc(struct kunit *test, size_t size, int gfp);
void *kunit_kcalloc(struct kunit *test, size_t n, size_t size, int gfp);

/* a failure: @abort ends the case (assertion), else it goes on */
void kshim_kunit_fail(struct kunit *test, bool abort, const char *file,
		      int line, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void kshim_kunit_fail_binary(struct kunit *test, bool abort,
			     const char *file, int line, const char *left,
			     const char *op, const char *right,
			     long long lv, long long rv, const char *fmt, ...)
	__attribute__((format(printf, 10, 11)));
void kshim_kunit_skip(struct kunit *test, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
void kshim_kunit_log(struct kunit *test, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define kunit_skip(test, fmt, ...) \
	kshim_kunit_skip(test, fmt, ##__VA_ARGS__)
#define kunit_info(test, fmt, ...) kshim_kunit_log(test, fmt, ##__VA_ARGS__)
#define kunit_err(test, fmt, ...) kshim_kunit_log(test, fmt, ##__VA_ARGS__)

#define KSHIM_COND(test, abort, cond, what, fmt, ...)			\
	do {								\
		if (!(cond))						\
			kshim_kunit_fail(test, abort, __FILE__, __LINE__, \
					 what, "" fmt, ##__VA_ARGS__);	\
	} while (0)

#define KSHIM_BINARY(test, abort, left, op, right, fmt, ...)		\
	do {								\
		__typeof__(left) __l = (left);				\
		__typeof__(right) __r = (right);			\
									\
		if (!(__l op __r))					\
			kshim_kunit_fail_binary(test, abort, __FILE__,	\
				__LINE__, #left, #op, #right,		\
				(long long)__l, (long long)__r,		\
				"" fmt, ##__VA_ARGS__);			\
	} while (0)

#define KUNIT_FAIL(test, fmt, ...) \
	kshim_kunit_fail(test, false, __FILE__, __LINE__, "KUNIT_FAIL", \
			 fmt, ##__VA_ARGS__)
#define KUNIT_FAIL_AND_ABORT(test, fmt, ...) \
	kshim_kunit_fail(test, true, __FILE__, __LINE__, "KUNIT_FAIL", \
			 fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_TRUE_MSG(t, c, fmt, ...) \
	KSHIM_COND(t, false, c, #c " is true", fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_FALSE_MSG(t, c, fmt, ...) \
	KSHIM_COND(t, false, !(c), #c " is false", fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_TRUE_MSG(t, c, fmt, ...) \
	KSHIM_COND(t, true, c, #c " is true", fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_FALSE_MSG(t, c, fmt, ...) \
	KSHIM_COND(t, true, !(c), #c " is false", fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_TRUE(t, c)		KUNIT_EXPECT_TRUE_MSG(t, c, "")
#define KUNIT_EXPECT_FALSE(t, c)	KUNIT_EXPECT_FALSE_MSG(t, c, "")
#define KUNIT_ASSERT_TRUE(t, c)		KUNIT_ASSERT_TRUE_MSG(t, c, "")
#define KUNIT_ASSERT_FALSE(t, c)	KUNIT_ASSERT_FALSE_MSG(t, c, "")

#define KUNIT_ASSERT_NOT_NULL(t, p) \
	KSHIM_COND(t, true, (p) != NULL, #p " is not NULL", "")
#define KUNIT_EXPECT_NOT_NULL(t, p) \
	KSHIM_COND(t, false, (p) != NULL, #p " is not NULL", "")
#define KUNIT_EXPECT_NULL(t, p) \
	KSHIM_COND(t, false, (p) == NULL, #p " is NULL", "")
#define KUNIT_EXPECT_PTR_EQ(t, a, b) \
	KSHIM_COND(t, false, (a) == (b), #a " == " #b, "")
#define KUNIT_EXPECT_PTR_NE(t, a, b) \
	KSHIM_COND(t, false, (a) != (b), #a " != " #b, "")

#define KUNIT_EXPECT_EQ_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, false, a, ==, b, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, false, a, !=, b, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_LT_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, false, a, <, b, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_LE_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, false, a, <=, b, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_GT_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, false, a, >, b, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_GE_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, false, a, >=, b, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_EQ_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, true, a, ==, b, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_NE_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, true, a, !=, b, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_LT_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, true, a, <, b, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_LE_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, true, a, <=, b, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_GT_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, true, a, >, b, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_GE_MSG(t, a, b, fmt, ...) \
	KSHIM_BINARY(t, true, a, >=, b, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_EQ(t, a, b)	KUNIT_EXPECT_EQ_MSG(t, a, b, "")
#define KUNIT_EXPECT_NE(t, a, b)	KUNIT_EXPECT_NE_MSG(t, a, b, "")
#define KUNIT_EXPECT_LT(t, a, b)	KUNIT_EXPECT_LT_MSG(t, a, b, "")
#define KUNIT_EXPECT_LE(t, a, b)	KUNIT_EXPECT_LE_MSG(t, a, b, "")
#define KUNIT_EXPECT_GT(t, a, b)	KUNIT_EXPECT_GT_MSG(t, a, b, "")
#define KUNIT_EXPECT_GE(t, a, b)	KUNIT_EXPECT_GE_MSG(t, a, b, "")
#define KUNIT_ASSERT_EQ(t, a, b)	KUNIT_ASSERT_EQ_MSG(t, a, b, "")
#define KUNIT_ASSERT_NE(t, a, b)	KUNIT_ASSERT_NE_MSG(t, a, b, "")
#define KUNIT_ASSERT_LT(t, a, b)	KUNIT_ASSERT_LT_MSG(t, a, b, "")
#define KUNIT_ASSERT_LE(t, a, b)	KUNIT_ASSERT_LE_MSG(t, a, b, "")
#define KUNIT_ASSERT_GT(t, a, b)	KUNIT_ASSERT_GT_MSG(t, a, b, "")
#define KUNIT_ASSERT_GE(t, a, b)	KUNIT_ASSERT_GE_MSG(t, a, b, "")

#endif /* KSHIM_KUNIT_H */
