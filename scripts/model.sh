#!/usr/bin/env bash
# Stage "model": SPIN model check of the rollover allocator with its
# mutation gate (selftests/model/check.sh); KTAP into $RESULTS/ktap/.
stage=model
. "$(dirname "$0")/lib.sh"
need_cmd spin gcc
# The check is exhaustive and deterministic: its verdict depends only on the
# model, the scripts and the tools, so an unchanged set re-uses it (see
# VERDICT_KEY in host-test.sh; VERDICT_CACHE=0 re-runs it).
VERDICT_KEY="$(cd "$TOP" && sha256sum selftests/model/* scripts/model.sh scripts/host-test.sh scripts/cpu-budget.py)
$(spin -V 2>&1 | head -n1)
$(gcc --version | head -n1)"
export VERDICT_KEY
exec "$TOP/scripts/host-test.sh" model "$TOP/selftests/model/check.sh"
