#!/usr/bin/env bash
# Stage "model": SPIN model check of the rollover allocator with its
# mutation gate (selftests/model/check.sh); KTAP into $RESULTS/ktap/.
stage=model
. "$(dirname "$0")/lib.sh"
need_cmd spin gcc
exec "$TOP/scripts/host-test.sh" model "$TOP/selftests/model/check.sh"
