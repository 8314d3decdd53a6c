// SPDX-License-Identifier: GPL-2.0
/*
 * kunit_host.c - runs the KUnit suite arch/arm64/lib/asid_kunit.c on
 * x86-64, built unmodified together with the real arch/arm64/lib/asid.c,
 * arch/arm64/mm/context.c and arch/arm64/kvm/vmid.c against shim/ (as
 * tools/testing/radix-tree builds lib/xarray.c and lib/test_xarray.c).
 * kunit_check.sh builds it and runs its mutation gate.
 *
 * The KUnit API is shim/kshim_kunit.h. Each case runs in a child process
 * (fork), so that a case that crashes (a mutant, say) or hangs is reported
 * as failed and the others still run from a fresh state. A case that loops
 * is ended by a CPU-time budget (RLIMIT_CPU of KUNIT_CASE_CPU_SECONDS,
 * default 10; a case uses well under 1 s), which load cannot reach as it
 * can a wall-clock limit; one that blocks (a lock never released: the
 * shim's spinlocks are mutexes) by a wall-clock backstop of
 * KUNIT_CASE_WALL_SECONDS (default 120), far above what a starved case
 * takes (the whole suite needs about 0.15 s of CPU). Either is reported with the CPU the case used. A WARN_ON() during a case fails it,
 * as a splat fails a workbench boot. Output: KTAP as the kernel's KUnit
 * executor prints it, failure messages as "# " lines before the result.
 *
 * The TLB maintenance operations are models, so that the suite sees what
 * the users' flush callbacks really issue (asid_kunit.c, built with
 * -DASID_TEST_TLB_MODEL, asks asid_test_tlb_model_flushes()):
 * local_flush_tlb_all() (context.c's deferred flush) counts a local
 * invalidation, __kvm_flush_vm_context() (vmid.c's broadcast flush, through
 * kvm_call_hyp()) a broadcast one.
 *
 * Usage: kunit_host [-l] [glob...]   run the cases matching any glob
 *        (fnmatch on the case name; all without one); -l lists the cases.
 * Env:   KUNIT_NCPU       possible CPUs (default 4, at most NR_CPUS)
 *        KUNIT_NO_KVM=1   is_kvm_arm_initialised() is false
 *        KUNIT_CASE_CPU_SECONDS CPU seconds per case (default 10)
 *        KUNIT_CASE_WALL_SECONDS wall-clock backstop per case (default 120)
 *        KUNIT_HOST_SELFTEST=1  instead of the suite, the runner's own
 *                         cases runner_spins and runner_blocks, which hang
 *                         (the workbench checks that the limits end them)
 * Exit:  0 every selected case passed, 1 a case failed or was skipped
 *        (skipping is not passing here), 3 usage error.
 */
#include "shim/kshim_kunit.h"

#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define KSHIM_DEFAULT_CPUS	4
#define KSHIM_DEFAULT_VMID_BITS	8
#include "shim/kshim_globals.h"

/* ---- TLB model ---- */
static unsigned long tlb_local_flushes, tlb_broadcast_flushes;

void kshim_local_flush_tlb_all(void)
{
	tlb_local_flushes++;
}

void __kvm_flush_vm_context(void)
{
	tlb_broadcast_flushes++;
}

unsigned long asid_test_tlb_model_flushes(bool broadcast);
unsigned long asid_test_tlb_model_flushes(bool broadcast)
{
	return broadcast ? tlb_broadcast_flushes : tlb_local_flushes;
}

/* ---- resources ---- */
struct kunit_resource_node {
	struct kunit_resource_node	*next;
	kunit_action_t			*action;
	void				*ctx;
	void				*mem;	/* or memory to free */
};

static void add_node(struct kunit *test, kunit_action_t *action, void *ctx,
		     void *mem)
{
	struct kunit_resource_node *n = calloc(1, sizeof(*n));

	if (!n)
		abort();
	n->action = action;
	n->ctx = ctx;
	n->mem = mem;
	n->next = test->resources;
	test->resources = n;
}

int kunit_add_action_or_reset(struct kunit *test, kunit_action_t *action,
			      void *ctx)
{
	add_node(test, action, ctx, NULL);
	return 0;
}

void *kunit_kzalloc(struct kunit *test, size_t size, int gfp)
{
	void *p = calloc(1, size ? size : 1);

	if (p)
		add_node(test, NULL, NULL, p);
	return p;
}

void *kunit_kcalloc(struct kunit *test, size_t n, size_t size, int gfp)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return kunit_kzalloc(test, n * size, gfp);
}

static void release_all(struct kunit *test)
{
	while (test->resources) {
		struct kunit_resource_node *n = test->resources;

		test->resources = n->next;
		if (n->action)
			n->action(n->ctx);
		free(n->mem);
		free(n);
	}
}

/* ---- failures ---- */
static void vlog(struct kunit *test, const char *fmt, va_list ap)
{
	char buf[1024], *line, *save;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("    # %s: %s\n", test->name, line);
}

void kshim_kunit_log(struct kunit *test, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(test, fmt, ap);
	va_end(ap);
}

static void failed(struct kunit *test, bool abort)
{
	test->status = KUNIT_FAILURE;
	fflush(stdout);
	if (abort)
		longjmp(test->abort, 1);
}

void kshim_kunit_fail(struct kunit *test, bool abort, const char *file,
		      int line, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("    # %s: %s FAILED at %s:%d\n", test->name,
	       abort ? "ASSERTION" : "EXPECTATION", file, line);
	printf("    # %s: Expected %s\n", test->name, what);
	if (*fmt) {
		va_start(ap, fmt);
		vlog(test, fmt, ap);
		va_end(ap);
	}
	failed(test, abort);
}

void kshim_kunit_fail_binary(struct kunit *test, bool abort,
			     const char *file, int line, const char *left,
			     const char *op, const char *right,
			     long long lv, long long rv, const char *fmt, ...)
{
	va_list ap;

	printf("    # %s: %s FAILED at %s:%d\n", test->name,
	       abort ? "ASSERTION" : "EXPECTATION", file, line);
	printf("    # %s: Expected %s %s %s, but\n", test->name, left, op,
	       right);
	printf("    # %s:     %s == %lld (%#llx)\n", test->name, left, lv,
	       (unsigned long long)lv);
	printf("    # %s:     %s == %lld (%#llx)\n", test->name, right, rv,
	       (unsigned long long)rv);
	if (*fmt) {
		va_start(ap, fmt);
		vlog(test, fmt, ap);
		va_end(ap);
	}
	failed(test, abort);
}

void kshim_kunit_skip(struct kunit *test, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(test->status_comment, sizeof(test->status_comment), fmt, ap);
	va_end(ap);
	test->status = KUNIT_SKIPPED;
	fflush(stdout);
	longjmp(test->abort, 1);
}

/* ---- runner ---- */
#define MAX_SUITES 8
static struct kunit_suite *suites[MAX_SUITES];
static int nr_suites;

void kshim_kunit_register(struct kunit_suite *suite)
{
	if (nr_suites == MAX_SUITES)
		abort();
	suites[nr_suites++] = suite;
}

/* ---- the runner's own cases: a case that hangs, spinning or blocked ---- */
static void runner_spins(struct kunit *test)
{
	volatile unsigned long n = 0;

	for (;;)
		n++;
}

static void runner_blocks(struct kunit *test)
{
	for (;;)
		pause();
}

static struct kunit_case runner_cases[] = {
	KUNIT_CASE(runner_spins),
	KUNIT_CASE(runner_blocks),
	{}
};

static struct kunit_suite runner_suite = {
	.name = "kunit_host_runner",
	.test_cases = runner_cases,
};

/* child: run one case, exit with its status (0 pass, 1 fail, 2 skip) */
static void run_case(struct kunit_suite *suite, struct kunit_case *c,
		     int fd)
{
	struct kunit test = { .name = c->name };

	if (!setjmp(test.abort)) {
		if (suite->init && suite->init(&test))
			test.status = KUNIT_FAILURE;
		else
			c->run_case(&test);
	}
	if (suite->exit)
		suite->exit(&test);
	release_all(&test);
	if (kshim_warns && test.status != KUNIT_SKIPPED) {
		printf("    # %s: %d WARN_ON() fired\n", c->name, kshim_warns);
		test.status = KUNIT_FAILURE;
	}
	fflush(stdout);
	if (test.status == KUNIT_SKIPPED)
		(void)!write(fd, test.status_comment, strlen(test.status_comment));
	_exit(test.status == KUNIT_SUCCESS ? 0 :
	      test.status == KUNIT_SKIPPED ? 2 : 1);
}

static bool selected(const char *name, int nglob, char **globs)
{
	int i;

	if (!nglob)
		return true;
	for (i = 0; i < nglob; i++)
		if (!fnmatch(globs[i], name, 0))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	int s, pass = 0, fail = 0, skip = 0, list = 0, nglob;
	int cpu_budget = 10, wall_backstop = 120;
	struct rlimit rl;	/* each case's RLIMIT_CPU */
	char **globs;
	const char *e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "-l")) {
		list = 1;
		argc--;
		argv++;
	}
	nglob = argc - 1;
	globs = argv + 1;
	if ((e = getenv("KUNIT_NCPU")))
		kshim_nr_cpus = atoi(e);
	if (kshim_nr_cpus < 1 || kshim_nr_cpus > NR_CPUS) {
		fprintf(stderr, "KUNIT_NCPU must be 1..%d\n", NR_CPUS);
		return 3;
	}
	if ((e = getenv("KUNIT_NO_KVM")) && atoi(e))
		kshim_kvm_initialised = false;
	/*
	 * The live VMID allocator, as KVM's initialisation sets it up; if
	 * that fails, so does KVM's: the cases that need KVM skip.
	 */
	if (kshim_kvm_initialised && kvm_arm_vmid_alloc_init()) {
		fprintf(stderr, "kvm_arm_vmid_alloc_init() failed: running without KVM\n");
		kshim_kvm_initialised = false;
	}
	if ((e = getenv("KUNIT_CASE_CPU_SECONDS")))
		cpu_budget = atoi(e);
	if ((e = getenv("KUNIT_CASE_WALL_SECONDS")))
		wall_backstop = atoi(e);
	if (cpu_budget < 1 || wall_backstop < 1) {
		fprintf(stderr, "KUNIT_CASE_CPU_SECONDS and KUNIT_CASE_WALL_SECONDS must be whole numbers of seconds, 1 or more\n");
		return 3;
	}
	/* Each case's CPU limit, never above one this runner was given. */
	if (getrlimit(RLIMIT_CPU, &rl))
		abort();
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= cpu_budget + 2)
		rl.rlim_max = cpu_budget + 2;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > cpu_budget)
		rl.rlim_cur = cpu_budget;
	cpu_budget = rl.rlim_cur;
	if ((e = getenv("KUNIT_HOST_SELFTEST")) && atoi(e)) {
		suites[0] = &runner_suite;
		nr_suites = 1;
	}

	if (list) {
		for (s = 0; s < nr_suites; s++) {
			struct kunit_case *c;

			for (c = suites[s]->test_cases; c->run_case; c++)
				if (selected(c->name, nglob, globs))
					printf("%s\n", c->name);
		}
		return 0;
	}

	printf("KTAP version 1\n1..%d\n", nr_suites);
	for (s = 0; s < nr_suites; s++) {
		struct kunit_suite *suite = suites[s];
		int n = 0, spass = 0, sfail = 0, sskip = 0, total = 0;
		struct kunit_case *c;

		for (c = suite->test_cases; c->run_case; c++)
			total += selected(c->name, nglob, globs);
		printf("    KTAP version 1\n    # Subtest: %s\n    # possible CPUs: %d%s\n    1..%d\n",
		       suite->name, kshim_nr_cpus,
		       kshim_kvm_initialised ? "" : ", KVM not initialised",
		       total);
		for (c = suite->test_cases; c->run_case; c++) {
			char comment[256] = "";
			int pfd[2], st, len;
			struct rusage ru;
			double used;
			pid_t pid;

			if (!selected(c->name, nglob, globs))
				continue;
			n++;
			if (pipe(pfd))
				abort();
			fflush(stdout);
			pid = fork();
			if (pid < 0)
				abort();
			if (!pid) {
				struct rlimit no_core = { 0, 0 };

				close(pfd[0]);
				if (setrlimit(RLIMIT_CPU, &rl) ||
				    setrlimit(RLIMIT_CORE, &no_core))
					abort();
				alarm(wall_backstop);
				run_case(suite, c, pfd[1]);
			}
			close(pfd[1]);
			len = read(pfd[0], comment, sizeof(comment) - 1);
			comment[len > 0 ? len : 0] = 0;
			close(pfd[0]);
			wait4(pid, &st, 0, &ru);
			used = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
				printf("    ok %d %s\n", n, c->name);
				spass++;
			} else if (WIFEXITED(st) && WEXITSTATUS(st) == 2) {
				printf("    ok %d %s # SKIP %s\n", n, c->name,
				       comment);
				sskip++;
			} else {
				if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
					printf("    # %s: TIMEOUT: did not end in %d s of wall time (the backstop, KUNIT_CASE_WALL_SECONDS), having used %.1f s of CPU of its %d s budget: a hang that uses no CPU (blocked)\n",
					       c->name, wall_backstop, used,
					       cpu_budget);
				else if (WIFSIGNALED(st) &&
					 (WTERMSIG(st) == SIGXCPU ||
					  (WTERMSIG(st) == SIGKILL &&
					   used >= 0.9 * cpu_budget)))
					printf("    # %s: TIMEOUT: used its CPU budget: %.1f s of CPU, limit %d s (KUNIT_CASE_CPU_SECONDS)\n",
					       c->name, used, cpu_budget);
				else if (WIFSIGNALED(st))
					printf("    # %s: killed by signal %d\n",
					       c->name, WTERMSIG(st));
				printf("    not ok %d %s\n", n, c->name);
				sfail++;
			}
		}
		printf("# %s: pass:%d fail:%d skip:%d total:%d\n", suite->name,
		       spass, sfail, sskip, n);
		printf("%sok %d %s\n", sfail ? "not " : "", s + 1, suite->name);
		pass += spass;
		fail += sfail;
		skip += sskip;
	}
	printf("# Totals: pass:%d fail:%d skip:%d total:%d\n", pass, fail,
	       skip, pass + fail + skip);
	return fail || skip ? 1 : 0;
}
