"""The anatomical preset library: every file is a valid rig spec, and each limit allows each
published motion up to its range and no further."""

from __future__ import annotations

import math
from importlib import resources

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.mirroring import mirror_limit_exact, mirror_name
from quat_ik_addon.solver.limits.presets import (
    PresetMotion,
    load_preset,
    load_preset_spec,
    preset_convention,
    preset_info,
    preset_names,
)
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.spec_chain import solver_limit

REQUIRED = {
    "shoulder",
    "elbow",
    "forearm_twist",
    "wrist",
    "hip",
    "knee",
    "ankle",
    "spine_segment",
    "neck",
    "finger_mcp",
    "finger_pip",
    "finger_dip",
}
Y = np.array([0.0, 1.0, 0.0])


def test_the_library_holds_the_joints_we_promise() -> None:
    assert REQUIRED <= set(preset_names())
    assert "flexion" in preset_convention().lower() and "LEFT" in preset_convention()


def test_every_file_is_indexed_and_every_index_entry_has_a_file() -> None:
    folder = resources.files("quat_ik_addon.presets")
    files = {entry.name for entry in folder.iterdir() if entry.name.endswith(".rig.json")}
    assert files == {preset_info(name).file for name in preset_names()}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_preset_is_a_valid_one_bone_spec(name: str) -> None:
    info = preset_info(name)
    rig = load_preset_spec(name)
    assert rig.bone_names == (info.bone,)
    limit = load_preset(name)
    assert isinstance(limit, (spec.BallLimit, spec.HingeLimit))
    assert limit.type == info.kind
    assert spec.loads_rig_spec(rig.dumps()) == rig  # canonical: saves and loads back the same
    assert info.sources and all(source for source in info.sources)
    assert float(solver_limit(limit).violation(quat.IDENTITY)) == 0.0  # the rest pose is allowed


def _pose(motion: PresetMotion, axis: np.ndarray | None, degrees: float) -> np.ndarray:
    angle = math.radians(degrees)
    if motion.swing_toward is not None:
        return quat.rotation_from_y(math.cos(angle) * Y + math.sin(angle) * np.asarray(motion.swing_toward))
    if motion.twist_sign is not None:
        return quat.from_y_angle(motion.twist_sign * angle)
    assert axis is not None and motion.hinge_sign is not None
    return quat.from_axis_angle(axis, motion.hinge_sign * angle)


MOTIONS = [(name, motion) for name in sorted(REQUIRED) for motion in preset_info(name).motions]


@pytest.mark.parametrize(("name", "motion"), MOTIONS, ids=[f"{name}-{motion.motion}" for name, motion in MOTIONS])
def test_each_motion_reaches_its_range_and_no_further(name: str, motion: PresetMotion) -> None:
    limit = solver_limit(load_preset(name))
    axis = getattr(limit, "axis", None)
    on_the_way = np.array([_pose(motion, axis, degrees) for degrees in np.linspace(0.0, motion.used_deg, 60)])
    assert np.all(limit.violation(on_the_way) < 1e-9), "the motion is blocked before its range"
    if motion.used_deg + 3.0 < 180.0:
        assert float(limit.violation(_pose(motion, axis, motion.used_deg + 3.0))) > math.radians(1.5)
    assert motion.used_deg == motion.published_deg or motion.note, "a departure from the source needs a note"


def test_presets_mirror_exactly_for_the_right_side() -> None:
    for name in preset_names():
        info = preset_info(name)
        limit = load_preset(name)
        assert mirror_limit_exact(mirror_limit_exact(limit)) == limit
        if info.side == "left":
            assert mirror_name(info.bone).endswith(".R")


def test_loading_does_not_depend_on_the_working_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert isinstance(load_preset("knee"), spec.HingeLimit)


def test_unknown_preset_names_the_ones_that_exist() -> None:
    with pytest.raises(KeyError, match="shoulder"):
        load_preset("tail")


def test_knee_bends_backward_and_elbow_forward() -> None:
    """The convention: flexion swings the elbow's forearm toward +Z (front), the knee's shin toward −Z."""
    knee = solver_limit(load_preset("knee"))
    elbow = solver_limit(load_preset("elbow"))
    knee_bent = knee.clamp(quat.rotation_from_y(np.array([0.0, 0.0, -1.0])))
    elbow_bent = elbow.clamp(quat.rotation_from_y(np.array([0.0, 0.0, 1.0])))
    assert quat.rotate_y_axis(knee_bent)[2] == pytest.approx(-1.0)
    assert quat.rotate_y_axis(elbow_bent)[2] == pytest.approx(1.0)


def test_every_preset_says_where_its_z_points_in_the_anatomical_position() -> None:
    toward = {name: preset_info(name).z_toward for name in preset_names()}
    assert toward.pop("ankle") == "up"  # the foot points forward, +Z up to the instep
    # Measured from thumb-forward, the forearm twist stands fully supinated with the palm forward.
    assert toward.pop("forearm_twist") == "lateral" and preset_info("forearm_twist").anatomical_twist_deg == -90.0
    assert set(toward.values()) == {"front"}, toward
    assert all(preset_info(name).anatomical_twist_deg == 0.0 for name in toward)
