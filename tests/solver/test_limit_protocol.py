"""Joint limits are reached through one protocol (``solver.limits.joints.JointLimit``): every
limit class answers all of it, and no module outside ``solver/limits`` asks a limit its class."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from quat_ik_addon.solver.limits import joints
from quat_ik_addon.solver.limits.channel_locks import LockedComponentsJoint, LockedEulerJoint
from quat_ik_addon.solver.limits.reach_windows import ConeWindow

PACKAGE = Path(joints.__file__).resolve().parents[2]
LIMIT_CLASSES = {
    name
    for module in ("joints", "reach_windows", "channel_locks")
    for name, value in vars(__import__(f"quat_ik_addon.solver.limits.{module}", fromlist=["x"])).items()
    if isinstance(value, type) and value.__module__.endswith(module) and name[0].isupper()
}
SOLVER_LIMIT_MODULES = ("joints", "reach_windows", "channel_locks", "limits")
PROTOCOL = ("stiffness", "degrees_of_freedom", "hinge_axis", "twist_range", "may_twist", "centre", "step_share")


def _class_checks(path: Path) -> list[str]:
    """``isinstance(x, C)`` / ``issubclass`` / ``type(x) is C`` with C a limit or window class."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[ast.expr] = []
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "issubclass"):
            classes = node.args[1]
            names = list(classes.elts) if isinstance(classes, ast.Tuple) else [classes]
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
            names = node.comparators
        for name in names:
            # A bare name, or one reached through a solver limits module; the rig spec's records
            # of the same names (``spec.ConeWindow``) are a file format's data, not limits.
            module = getattr(getattr(name, "value", None), "id", None)
            bare = isinstance(name, ast.Name) and name.id in LIMIT_CLASSES
            if bare or (getattr(name, "attr", None) in LIMIT_CLASSES and module in SOLVER_LIMIT_MODULES):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_no_module_outside_the_limits_checks_a_limits_class():
    limits = PACKAGE / "solver" / "limits"
    outside = [path for path in PACKAGE.rglob("*.py") if limits not in path.parents]
    found = [where for path in outside for where in _class_checks(path)]
    assert not found, f"limit classes checked outside solver/limits (ask the JointLimit protocol): {found}"


def test_the_scan_finds_class_checks_and_passes_the_rig_specs_records(tmp_path):
    written = tmp_path / "module.py"
    written.write_text(
        "def f(limit, window):\n"
        "    a = isinstance(limit, (HingeJoint, int)) or type(limit) is BallJoint\n"
        "    b = isinstance(window, joints.FixedJoint)\n"
        "    return a, b, isinstance(window, spec.ConeWindow)\n"
    )
    assert len(_class_checks_at(written)) == 3


def _class_checks_at(path: Path) -> list[str]:
    global PACKAGE
    kept, PACKAGE = PACKAGE, path.parent.parent
    try:
        return _class_checks(path)
    finally:
        PACKAGE = kept


@pytest.mark.parametrize(
    "limit",
    [
        joints.FreeJoint(),
        joints.FixedJoint(),
        joints.HingeJoint(np.array([1.0, 0.0, 0.0]), joints.AngleRange(-0.5, 1.0)),
        joints.BallJoint((ConeWindow(np.array([0.0, 1.0, 0.0]), 0.6),), joints.AngleRange(-0.3, 0.3), stiffness=0.25),
        LockedEulerJoint(joints.FreeJoint(), "XYZ", (True, False, False), (0.0, 0.0, 0.0)),
        LockedComponentsJoint(joints.FreeJoint(), (False, True, False, False), (1.0, 0.0, 0.0, 0.0)),
    ],
    ids=lambda limit: type(limit).__name__,
)
def test_every_limit_answers_the_whole_protocol(limit, rng):
    for name in PROTOCOL:
        assert hasattr(limit, name), f"{type(limit).__name__} has no {name}"
    assert limit.degrees_of_freedom in (0, 1, 3)
    assert (limit.hinge_axis is not None) == (limit.degrees_of_freedom == 1)
    assert 0.0 <= limit.step_share <= 1.0
    centre = np.asarray(limit.centre, dtype=float)
    assert centre.shape == (4,) and abs(np.linalg.norm(centre) - 1.0) < 1e-12
    samples = limit.sample(rng, 50)
    assert np.max(limit.violation(samples)) <= 1e-9
    assert np.max(limit.violation(limit.clamp(rng.normal(size=(50, 4))))) <= 1e-9
