"""The kernel under AddressSanitizer and UndefinedBehaviorSanitizer, on random valid and hostile
inputs: fuzz/fuzz_kernel.c (its comment says what each kind of case must satisfy), compiled with
gcc together with every kernel/*.c and run for a few seconds per seed.

By hand: ``gcc -std=c11 -g -O1 -fsanitize=address,undefined,float-cast-overflow
-fno-sanitize-recover=all -fno-omit-frame-pointer -I quat_ik_addon/solver/native/kernel
tests/solver/native/fuzz/fuzz_kernel.c quat_ik_addon/solver/native/kernel/*.c -o fuzz_kernel -lm``,
then ``./fuzz_kernel SEED CASES [FIRST]``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.build_native import KERNEL_DIR, kernel_sources

FUZZ_SOURCE = Path(__file__).resolve().parent / "fuzz" / "fuzz_kernel.c"
# float-cast-overflow is not part of "undefined": a NaN or huge double cast to an integer is UB.
SANITIZER_FLAGS = (
    "-std=c11",
    "-g",
    "-O1",
    "-fsanitize=address,undefined,float-cast-overflow",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
)
CASES_PER_SEED = 20_000
SEEDS = (1, 2, 3)
SANITIZER_ENVIRONMENT = {
    "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}
REPORT_MARKERS = ("Sanitizer", "runtime error:")


@pytest.fixture(scope="module")
def fuzz_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fuzz_kernel.c and the kernel, built with the sanitizers (a test failure, not a skip, without gcc)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is not on PATH: the sanitizer fuzz test needs gcc with libasan and libubsan (Debian: gcc)")
    binary = tmp_path_factory.mktemp("fuzz") / "fuzz_kernel"
    command = [gcc, *SANITIZER_FLAGS, "-Wall", "-Wextra", f"-I{KERNEL_DIR}", str(FUZZ_SOURCE)]
    command += [*map(str, kernel_sources()), "-o", str(binary), "-lm"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        pytest.fail(f"compiling the fuzz driver with the kernel failed:\n{' '.join(command)}\n{result.stderr}")
    return binary


@pytest.mark.parametrize("seed", SEEDS)
def test_kernel_survives_random_and_hostile_inputs(fuzz_binary: Path, seed: int) -> None:
    result = subprocess.run(
        [str(fuzz_binary), str(seed), str(CASES_PER_SEED)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, **SANITIZER_ENVIRONMENT},
    )
    output = f"exit {result.returncode}\n{result.stdout}\n{result.stderr[-6000:]}"
    assert result.returncode == 0, output
    assert not any(marker in result.stderr for marker in REPORT_MARKERS), output
    assert "all passed" in result.stdout, output
