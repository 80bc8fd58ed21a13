#!/usr/bin/env bash
# The checks a GPU machine runs unattended, in under ten minutes; everything goes under one folder.
#
#     bash perf/device_check.sh [OUT_DIR]      # default: $OUT, else ./device_check_out
#
# 1. installs the package and its test extra;
# 2. where cuda starts (tt.init("cuda") in a process of its own): the test families that run kernels, on cuda in
#    f32 and in f64 (TAICHI_TERRA_TEST_ARCH / _PRECISION; tests that compare bits with cpu f64 goldens are
#    expected to differ there: the JUnit files say which failed); then the harness (python -m perf) on cpu f64,
#    cuda f32 and f64 at 1 and 1024 envs; the step's two layouts on cuda f32 (python -m perf layouts: the fused
#    kernel against the GPU layout, a launch per stage); the harness's n_envs sweep of the rigid sphere on cuda
#    f32 from 16384 up to the memory limit (the largest n_envs that ran and its env-steps/s); and the vulkan
#    tests on the GPU's own Vulkan driver, where vulkan starts;
# 3. where it does not, says so and runs the harness's quick smoke on cpu instead, so the script itself is
#    checked on any machine.
# Each part has its own time limit, so a hang in one leaves the others their time.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT:-device_check_out}}
mkdir -p "$OUT_DIR"
exec > >(tee "$OUT_DIR/log.txt") 2>&1
t0=$(date +%s)
stamp() { echo "== $(( $(date +%s) - t0 )) s: $*"; }

stamp "install"
(nvidia-smi || echo "nvidia-smi: not found") > "$OUT_DIR/nvidia-smi.txt" 2>&1
timeout 60 pip install -q -e ".[test]" || echo "pip install failed (exit $?); going on with what is installed"
python -c "import taichi, platform; print('taichi', taichi.__version__, platform.platform())" | tee "$OUT_DIR/versions.txt"

stamp "does cuda start?"
if timeout 45 python -c "import taichi_terra as tt; tt.init('cuda', 'f32'); print('cuda starts')" \
        > "$OUT_DIR/cuda_probe.txt" 2>&1; then
    KERNEL_TESTS="tests/test_contacts.py tests/test_soil_bed.py tests/test_articulated.py tests/test_articulated_contacts.py
                  tests/test_tree_solve.py tests/test_joint_limits.py tests/test_rft.py tests/test_rft_scenes.py
                  tests/test_tracks.py tests/test_planar_contact.py tests/test_golden.py"
    for p in f32 f64; do
        stamp "kernel tests on cuda $p"
        TAICHI_TERRA_TEST_ARCH=cuda TAICHI_TERRA_TEST_PRECISION=$p timeout 60 python -m pytest -q -p no:cacheprovider \
            $KERNEL_TESTS --junitxml="$OUT_DIR/tests_cuda_$p.xml" > "$OUT_DIR/tests_cuda_$p.txt" 2>&1
        echo "exit $? (124: out of time)"; tail -3 "$OUT_DIR/tests_cuda_$p.txt"
    done
    stamp "harness: cpu f64, cuda f32 and f64"
    timeout 110 python -m perf --backends cpu-f64 cuda-f32 cuda-f64 --jobs 1 --repeats 3 --timeout 100 \
        --scenes rigid_sphere rigid_box planar_push quadruped rft_boxes hexapod --envs 1 1024 --steps 100 \
        --out-dir "$OUT_DIR/harness"
    echo "exit $?"
    stamp "step layouts on cuda f32: fused against staged"
    timeout 70 python -m perf layouts --arch cuda --envs 1 1024 --steps 50 --repeats 3 \
        --out "$OUT_DIR/layouts_cuda.json"
    echo "exit $?"
    stamp "largest n_envs of the rigid sphere"
    timeout 50 python -m perf --backends cuda-f32 --envs 16384 --repeats 1 --timeout 45 \
        --max-envs rigid_sphere --max-run-s 15 --out-dir "$OUT_DIR/max_envs"
    echo "exit $?"
    stamp "vulkan tests on the GPU's own Vulkan driver"
    if timeout 30 python -c "import taichi_terra as tt; tt.init('vulkan', 'f32'); print('vulkan starts')" \
            > "$OUT_DIR/vulkan_probe.txt" 2>&1; then
        timeout 60 python -m pytest -q -p no:cacheprovider tests/test_vulkan_loops.py tests/test_precision.py \
            -k vulkan --junitxml="$OUT_DIR/tests_vulkan.xml" > "$OUT_DIR/tests_vulkan.txt" 2>&1
        echo "exit $? (124: out of time)"; tail -3 "$OUT_DIR/tests_vulkan.txt"
    else
        echo "vulkan: does not start here"; tail -2 "$OUT_DIR/vulkan_probe.txt"
    fi
else
    echo "cuda: does not start on this machine, so its part is skipped:"
    tail -2 "$OUT_DIR/cuda_probe.txt"
    stamp "harness quick smoke on cpu (checks this script)"
    timeout 300 python -m perf --quick --scenes rigid_sphere planar_push --out-dir "$OUT_DIR/harness"
    echo "exit $?"
fi
stamp "done; everything is in $OUT_DIR"
