"""Overlay meshes for joint limits (pure numpy, no bpy): rims on the window boundaries, arcs
spanning exactly the twist and hinge ranges, indices in range, sizes scaling with the bone."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.joints import AngleRange
from quat_ik_addon.solver.limits.overlay_geometry import (
    COLOR_ROLES,
    OverlayMesh,
    hinge_mesh,
    limit_contact,
    limit_overlay,
    twist_arc_mesh,
    window_meshes,
)
from quat_ik_addon.solver.limits.window_shapes import cone_polygon
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.spec_chain import solver_limit, solver_window

WINDOWS = {
    "polygon": spec.PolygonWindow(vertices_deg=((-40, -30), (50, -30), (60, 40), (-30, 50))),
    "tilted_polygon": cone_polygon(30.0, 5, center=(1.0, 1.0, 0.3)),
    "cone": spec.ConeWindow(half_angle_deg=35.0, center=(0.2, 1.0, 0.1)),
    "wide_cone": spec.ConeWindow(half_angle_deg=130.0),
    "ellipse": spec.EllipticConeWindow(half_angles_deg=(60.0, 20.0), center=(0.0, 1.0, 0.5), x_axis=(1.0, 0.0, 1.0)),
}
BALL = spec.BallLimit(windows=(WINDOWS["polygon"], WINDOWS["cone"]), twist_deg=(-30.0, 60.0))
HINGE = spec.HingeLimit(axis=(1.0, 0.0, 0.0), range_deg=(5.0, 140.0))


def _assert_well_formed(mesh: OverlayMesh) -> None:
    assert mesh.vertices.dtype == np.float32 and mesh.vertices.ndim == 2 and mesh.vertices.shape[1] == 3
    assert mesh.triangles.dtype == np.int32 and mesh.triangles.shape[1:] == (3,)
    assert mesh.lines.dtype == np.int32 and mesh.lines.shape[1:] == (2,)
    for indices in (mesh.triangles, mesh.lines):
        assert indices.size == 0 or (indices.min() >= 0 and indices.max() < len(mesh.vertices))
    assert mesh.color_role in COLOR_ROLES
    assert np.all(np.isfinite(mesh.vertices))


def _push_out(direction: np.ndarray, reference: np.ndarray, angle: float) -> np.ndarray:
    """Turn ``direction`` by ``angle`` further from ``reference`` along the great circle through both."""
    away = (direction @ reference) * direction - reference  # tangent at direction, pointing away
    away /= np.linalg.norm(away)
    return math.cos(angle) * direction + math.sin(angle) * away


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_every_rim_vertex_lies_on_the_window_boundary(name: str) -> None:
    window = solver_window(WINDOWS[name])
    surface, outline = window_meshes(window, rim_distance=0.7, segments=32)
    for mesh in (surface, outline):
        _assert_well_formed(mesh)
    assert surface.color_role == "window" and outline.color_role == "window_outline"
    rim = surface.vertices[1:].astype(np.float64)
    np.testing.assert_allclose(surface.vertices[0], 0.0)
    np.testing.assert_allclose(np.linalg.norm(rim, axis=1), 0.7, rtol=1e-6)
    directions = rim / np.linalg.norm(rim, axis=1, keepdims=True)
    assert np.all(window.contains(directions, 1e-6))
    reference = window.reference
    pushed = np.array([_push_out(d, reference, 1e-3) for d in directions])
    assert not np.any(window.contains(pushed, 0.0))
    count = len(rim)
    expected = {"polygon": 4, "tilted_polygon": 5}.get(name, 32)
    assert count == expected
    assert len(surface.triangles) == count
    assert len(outline.lines) == count + (count if "polygon" in name else 4)


def test_polygon_faces_are_the_cone_faces() -> None:
    """Chords between corners lie in the polygonal cone's flat faces: their points are on the boundary too."""
    window = solver_window(WINDOWS["polygon"])
    surface, _ = window_meshes(window, 1.0)
    a, b = surface.vertices[1].astype(float), surface.vertices[2].astype(float)
    middle = 0.5 * (a + b)
    assert window.contains((middle / np.linalg.norm(middle))[None], 1e-6)[0]


def test_twist_arc_spans_exactly_the_range() -> None:
    twist_range = AngleRange(math.radians(-30.0), math.radians(60.0))
    mesh = twist_arc_mesh(twist_range, radius=0.2, height=0.5, segments=48)
    _assert_well_formed(mesh)
    arc = mesh.vertices[1:].astype(np.float64)
    angles = np.degrees(np.arctan2(arc[:, 0], arc[:, 2]))
    assert angles[0] == pytest.approx(-30.0, abs=1e-4) and angles[-1] == pytest.approx(60.0, abs=1e-4)
    assert np.all(np.diff(angles) > 0.0)
    np.testing.assert_allclose(np.hypot(arc[:, 0], arc[:, 2]), 0.2, rtol=1e-6)
    np.testing.assert_allclose(arc[:, 1], 0.5, rtol=1e-6)


def test_twist_arc_follows_the_swung_bone() -> None:
    twist_range = AngleRange(math.radians(-90.0), math.radians(90.0))
    swing = quat.rotation_from_y(np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0))
    mesh = twist_arc_mesh(twist_range, 0.2, 0.5, swing)
    bone = quat.rotate_y_axis(swing)
    centre = mesh.vertices[0].astype(np.float64)
    np.testing.assert_allclose(centre, 0.5 * bone, atol=1e-6)
    # The arc lies in the plane across the bone: every arm from the centre is perpendicular to it.
    np.testing.assert_allclose((mesh.vertices[1:] - centre) @ bone, 0.0, atol=1e-6)


@pytest.mark.parametrize("axis", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.3, 0.5, -0.8)])
def test_hinge_fan_spans_exactly_the_range(axis) -> None:
    hinge = solver_limit(spec.HingeLimit(axis=axis, range_deg=(5.0, 140.0)))
    mesh = hinge_mesh(hinge, radius=0.6, segments=48)
    _assert_well_formed(mesh)
    fan = mesh.vertices[1:-2].astype(np.float64)
    np.testing.assert_allclose(mesh.vertices[-2:], [0.6 * hinge.axis, -0.6 * hinge.axis], atol=1e-6)
    reference = fan[0] / np.linalg.norm(fan[0])
    # Each fan vertex is the first one turned about the axis by the hinge angle, in order.
    turned = quat.from_axis_angle(hinge.axis, np.radians(140.0 - 5.0))
    np.testing.assert_allclose(quat.rotate(turned, reference), fan[-1] / np.linalg.norm(fan[-1]), atol=1e-6)
    if axis != (0.0, 1.0, 0.0):
        start = quat.rotate(quat.from_axis_angle(hinge.axis, math.radians(5.0)), np.array([0.0, 1.0, 0.0]))
        np.testing.assert_allclose(reference, start, atol=1e-6)
    assert len(mesh.triangles) == len(fan) - 1
    assert mesh.color_role == "hinge"


def test_overlay_scales_with_the_bone_and_follows_the_frame() -> None:
    short = limit_overlay(BALL, np.eye(4), 1.0)
    long = limit_overlay(BALL, np.eye(4), 2.5)
    assert [m.color_role for m in short.meshes] == [m.color_role for m in long.meshes]
    for a, b in zip(short.meshes, long.meshes, strict=True):
        np.testing.assert_allclose(b.vertices, 2.5 * a.vertices, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(a.triangles, b.triangles)
    frame = np.eye(4)
    frame[:3, :3] = quat.to_matrix(quat.normalize(np.array([0.9, 0.1, -0.3, 0.2])))
    frame[:3, 3] = (1.0, -2.0, 0.5)
    moved = limit_overlay(BALL, frame, 1.0)
    for a, b in zip(short.meshes, moved.meshes, strict=True):
        expected = a.vertices.astype(np.float64) @ frame[:3, :3].T + frame[:3, 3]
        np.testing.assert_allclose(b.vertices, expected, atol=1e-5)


def test_overlay_contents_per_limit_kind() -> None:
    ball = limit_overlay(BALL, np.eye(4), 1.0)
    assert [m.color_role for m in ball.meshes] == [
        "window",
        "window_outline",
        "window",
        "window_outline",
        "twist",
        "twist",
        "direction",
    ]
    bent = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), math.radians(70.0))
    hinge = limit_overlay(HINGE, np.eye(4), 1.0, bent)
    assert [m.color_role for m in hinge.meshes] == ["hinge", "direction"]
    at_rest = limit_overlay(HINGE, np.eye(4), 1.0)  # rest (0°) is outside the range [5°, 140°]
    assert at_rest.at_limit and at_rest.meshes[-1].color_role == "warning"
    assert [m.color_role for m in limit_overlay(spec.FreeLimit(), np.eye(4), 1.0).meshes] == ["direction"]
    assert [m.color_role for m in limit_overlay(solver_limit(spec.FixedLimit()), np.eye(4), 1.0).meshes] == [
        "direction"
    ]
    for overlay in (ball, hinge):
        for mesh in overlay.meshes:
            _assert_well_formed(mesh)


def test_direction_line_points_along_the_posed_bone() -> None:
    pose = quat.normalize(np.array([0.8, 0.3, 0.2, -0.1]))
    overlay = limit_overlay(spec.FreeLimit(), np.eye(4), 0.4, pose)
    (line,) = overlay.meshes
    np.testing.assert_allclose(line.vertices[1], 0.4 * quat.rotate_y_axis(pose), atol=1e-6)


def test_warning_when_the_pose_sits_on_the_limit() -> None:
    limit = solver_limit(BALL)
    deep_inside = quat.rotation_from_y(np.array([0.05, 1.0, 0.02]) / np.linalg.norm([0.05, 1.0, 0.02]))
    far_out = quat.rotation_from_y(np.array([0.0, -1.0, 0.3]) / np.linalg.norm([0.0, -1.0, 0.3]))
    on_rim = limit.clamp(far_out[None])[0]
    tolerance = math.radians(1.0)
    assert not limit_contact(limit, deep_inside, tolerance).at_limit
    assert limit_contact(limit, on_rim, tolerance).swing
    assert limit_contact(limit, far_out, tolerance).swing
    # Inside but within the tolerance of the rim: on the limit; twice the tolerance inside: not.
    rim_direction = quat.rotate_y_axis(on_rim)
    reference = limit.windows[0].reference if limit.windows[0].contains(rim_direction[None], 1e-9)[0] else None
    assert reference is not None
    near = quat.rotation_from_y(_push_out(rim_direction, reference, -0.5 * tolerance))
    clear = quat.rotation_from_y(_push_out(rim_direction, reference, -3.0 * tolerance))
    assert limit_contact(limit, near, tolerance).swing
    assert not limit_contact(limit, clear, tolerance).swing
    roles = [mesh.color_role for mesh in limit_overlay(BALL, np.eye(4), 1.0, on_rim, tolerance).meshes]
    assert roles[-1] == "warning"
    assert [mesh.color_role for mesh in limit_overlay(BALL, np.eye(4), 1.0, deep_inside).meshes][-1] == "direction"


def test_twist_and_hinge_warnings() -> None:
    twisted = quat.from_y_angle(math.radians(60.0))
    contact = limit_contact(BALL, twisted)
    assert contact.twist and not contact.swing
    roles = [mesh.color_role for mesh in limit_overlay(BALL, np.eye(4), 1.0, twisted).meshes]
    assert roles[-2] == "warning" and roles[-1] == "direction"
    assert not limit_contact(BALL, quat.from_y_angle(math.radians(10.0))).twist
    x_axis = np.array([1.0, 0.0, 0.0])
    assert limit_contact(HINGE, quat.from_axis_angle(x_axis, math.radians(140.0))).hinge
    assert not limit_contact(HINGE, quat.from_axis_angle(x_axis, math.radians(70.0))).hinge
    off_axis = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), math.radians(20.0))
    assert limit_contact(HINGE, off_axis).hinge


def test_bad_bone_length_is_refused() -> None:
    with pytest.raises(ValueError):
        limit_overlay(BALL, np.eye(4), 0.0)


def test_a_twist_reference_draws_the_arc_where_the_bone_points_at_each_allowed_twist() -> None:
    """With a twist reference the arc's ends are where the bone's +Z points at the range's ends
    (the poses the clamp allows), and the marker shows the twist the range limits."""
    limit = spec.BallLimit(windows=(WINDOWS["cone"],), twist_deg=(-30.0, 60.0), twist_reference=(0.8, 0.2, -0.4, 0.4))
    solver = solver_limit(limit)
    pose = solver.sample(np.random.default_rng(2), 1)[0]
    radius, height = 0.15, 0.3  # limit_overlay's scales for a bone of length 1
    meshes = limit_overlay(limit, np.eye(4), 1.0, pose).meshes
    arc, marker = (mesh.vertices.astype(np.float64) for mesh in meshes if mesh.color_role == "twist")
    direction, twist = solver.split(pose[None])
    for end, angle in ((arc[1], -30.0), (arc[-1], 60.0)):
        at_end = solver.untwisted(direction)[0]
        expected = quat.rotate(quat.multiply(at_end, quat.from_y_angle(math.radians(angle))), [0.0, height, radius])
        np.testing.assert_allclose(end, expected, atol=1e-6)
    # The marker points where the bone's own +Z points now.
    np.testing.assert_allclose(marker[1] - marker[0], 1.3 * radius * quat.rotate(pose, [0.0, 0.0, 1.0]), atol=1e-6)
    assert -30.0 <= math.degrees(float(twist[0])) <= 60.0
