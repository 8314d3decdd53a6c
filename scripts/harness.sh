#!/usr/bin/env bash
# Stage "harness": the allocator's C compiled unmodified in userspace under
# TSan and ASan+UBSan, with its mutation gate (selftests/harness/check.sh).
#   KSRC=<tree>  kernel tree to take the allocator from (default: the
#                stock tree of the cache, i.e. before the series)
stage=harness
. "$(dirname "$0")/lib.sh"
need_cmd gcc
exec "$TOP/scripts/host-test.sh" harness "$TOP/selftests/harness/check.sh"
