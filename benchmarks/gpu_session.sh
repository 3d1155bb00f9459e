#!/bin/bash
# A lent GPU machine's session, as 2026-11-26's H200 ran it: no network there,
# so the packages its image lacks (islpy, dask, distributed and theirs) come
# as wheels in .whl/ (see the workplace's device notes); everything it
# measures is packed into $OUT/gpu.tgz to unpack over the checkout and commit.
#   MIN      campaign minutes (default 6)      CAMP_S  its hard limit in s
#   TEST_S   the GPU tests' limit (60)         OUT     where the results go
#   EXPERT_S the expert matmul's limit (default 0: skipped, the campaign's
#            forced stage times the same recipe among its plans)
#   COPY_S   benchmarks/gpu_copy.py's limit (default 0: skipped): copies, the
#            fastest axpy record and CuPy's timed in one run, after the campaign
#   STAGES, KERNELS, N_CORRECT, N_RANDOM, CLIMB   the campaign's --stages, --kernels, ...
# The expert matmul (benchmarks/gpu_expert.py, when asked for) and the campaign come first
# (the data); the GPU tests get SIGINT at their limit, so pytest still prints
# which failed (SIGTERM printed nothing twice).
cd "$(dirname "$0")/.." || exit 9
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
T0=$(date +%s)
el() { echo "=== $(( $(date +%s) - T0 )) s: $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD
fi
export PYTHONUNBUFFERED=1
python3 -c "import cupy, islpy; print('cupy', cupy.__version__, 'device', cupy.is_available())"
if [ "${EXPERT_S:-0}" != 0 ]; then
  el expert
  timeout -s INT "$EXPERT_S" python3 benchmarks/gpu_expert.py
  echo "expert rc=$?"
fi
el campaign
MIN=${MIN:-6}
timeout -s INT "${CAMP_S:-$(( ${MIN%.*} * 60 + 90 ))}" \
    python3 -m workbench campaign --backend cuda --minutes "$MIN" \
    ${STAGES:+--stages "$STAGES"} ${KERNELS:+--kernels "$KERNELS"} \
    ${N_CORRECT:+--n-correct "$N_CORRECT"} ${N_RANDOM:+--n-random "$N_RANDOM"} \
    ${CLIMB:+--climb "$CLIMB"}
echo "campaign rc=$?"
if [ "${COPY_S:-0}" != 0 ]; then
  el copy
  timeout -s INT "$COPY_S" python3 benchmarks/gpu_copy.py
  echo "copy rc=$?"
fi
pack() { tar czf "$OUT/gpu.tgz" data/gpu data/targets data/campaign/drawn 2>/dev/null; }
pack  # the data so far comes back even if the tests are cut by the lease
el tests
# -v: each test's outcome is printed as it ends, so a cut run still names its failures
timeout -s INT "${TEST_S:-60}" python3 -m pytest -p no:cacheprovider -n 4 -v --tb=short -rfs \
    tests/test_runtime.py tests/test_expert.py tests/test_campaign.py tests/test_drawn.py \
    -k "(gpu or cuda) and not readers and not figures_use" > "$OUT/pytest.txt" 2>&1
echo "pytest rc=$?"; grep -E "passed|failed|FAILED|Error" "$OUT/pytest.txt" | tail -30
el pack
pack
el done
