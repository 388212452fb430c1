"""Which path solves, as the command line and the panel say it: needs the kernel loaded."""

import json
from pathlib import Path

import numpy as np

from quat_ik_addon.solver import solver_path
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.cli import main
from quat_ik_addon.solver.native import kernel_calls, library
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.rig.spec import load_rig_spec

ARM3_SPEC = Path(__file__).resolve().parents[1] / "data" / "arm3.rig.json"


def test_the_solver_path_line_names_the_kernel_or_numpy_and_why(kernel):
    chain = reference_chains.REFERENCE_CHAINS["arm3"]()
    assert solver_path.describe() == library.load()[1].describe()
    assert solver_path.describe(chain) == "native kernel"
    with library.numpy_only():
        assert solver_path.describe(chain) == "numpy (kernel disabled in the add-on's preferences)"
    assert solver_path.describe(chain) == "native kernel"


def test_command_line_kernel_numpy_gives_the_kernels_answers_on_numpy(tmp_path, rng, kernel, monkeypatch):
    chain = Chain.from_rig_spec(load_rig_spec(ARM3_SPEC), "arm")
    reachable = chain.forward_kinematics(chain.random_poses(rng, 20)).effector
    targets = np.vstack([reachable, 3.0 * reachable[:4]])  # and a few out of reach
    (tmp_path / "targets.json").write_text(json.dumps(targets.tolist()))
    kernel_solves = []  # every time the solver was handed the kernel for a call
    kernel_for = kernel_calls.kernel_for

    def counted_kernel_for(*arguments):
        kernel = kernel_for(*arguments)
        if kernel is not None:
            kernel_solves.append(arguments)
        return kernel

    monkeypatch.setattr(kernel_calls, "kernel_for", counted_kernel_for)
    documents, solves_on_the_kernel = {}, {}
    for path in ("auto", "numpy"):
        out = tmp_path / f"{path}.json"
        arguments = ["solve", str(ARM3_SPEC), "--targets", str(tmp_path / "targets.json"), "--kernel", path]
        assert main([*arguments, "--restarts", "2", "-o", str(out)]) == 0
        documents[path], solves_on_the_kernel[path] = json.loads(out.read_text()), len(kernel_solves)
        kernel_solves.clear()
    auto, numpy_path = documents["auto"], documents["numpy"]
    assert auto["solver"] == "native kernel" and solves_on_the_kernel["auto"] > 0
    assert numpy_path["solver"] == "numpy (--kernel numpy)" and solves_on_the_kernel["numpy"] == 0
    assert library.load()[1].active, "--kernel numpy must not turn the kernel off for the rest of the process"
    same_to_rounding = 1e-8
    np.testing.assert_allclose(numpy_path["rotations"], auto["rotations"], atol=same_to_rounding)
    np.testing.assert_allclose(numpy_path["position_error"], auto["position_error"], atol=same_to_rounding)
    assert numpy_path["converged"] == auto["converged"]
    assert sum(auto["converged"]) == len(reachable)
