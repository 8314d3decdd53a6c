#!/usr/bin/env bash
# Stage "workbench-selftest": run scripts/workbench-faults.sh (fault
# injection cases) and keep its TAP for the report.
stage=workbench-selftest
. "$(dirname "$0")/lib.sh"
exec "$TOP/scripts/host-test.sh" workbench-selftest "$TOP/scripts/workbench-faults.sh"
