"""Viewport overlay meshes for joint limits: pure numpy, no ``bpy`` (the gpu draw callback of
``blender/ui/overlays.py`` feeds these arrays to ``gpu_extras.batch.batch_for_shader``).

Everything is built in the frame the limit lives in — the bone's rest frame, which follows
the parent when it moves — with the joint at the origin and the bone along +Y, then
carried by ``frame_matrix`` (4×4).  For drawing in armature space that matrix is
``bone.matrix_local`` at rest and, posed, ``pose_bone.matrix @ pose_bone.matrix_basis.inverted()``
(the bone's pose matrix without its own pose rotation); left-multiply the object's
``matrix_world`` for world space.  Sizes are fractions of ``bone_length``.

What is drawn (one :class:`OverlayMesh` per primitive, each with a ``color_role``):

* ``"window"`` — each reach window as a translucent cone: triangles from the joint to the
  window's rim at ``window_scale · bone_length``.  A polygon's rim is its corner directions
  joined by straight chords (exactly the polygonal cone's flat faces); cones and elliptic
  cones sample their rims at ``segments`` directions.
* ``"window_outline"`` — the rim loop and spokes from the joint to polygon corners (four
  spokes for round cones).
* ``"twist"`` — the twist range as an arc around the bone, in the plane across the bone's
  CURRENT direction (twist is measured about the swung bone): the arc point for twist τ is
  where the bone's local +Z would point, ``S·(sin τ, 0, cos τ)``; plus a marker at the
  current twist (``"warning"`` when the twist is at its limit).
* ``"hinge"`` — the hinge axis as a line and its angle range as a fan of the bone directions
  ``R(axis, φ)·ŷ`` (for an axis along the bone, of ``R(axis, φ)·ẑ``), with triangles and
  outline lines in one mesh.
* ``"direction"`` — the bone's current direction, from the joint, one bone length long;
  ``"warning"`` when the pose sits on (or beyond) a limit, see :func:`limit_contact`.

Vertices are float32 ``(K, 3)``; triangles int32 ``(T, 3)``; lines int32 ``(L, 2)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .. import quaternion as quat
from ..rig import spec as spec
from ..rig.spec_chain import solver_limit
from .joints import AngleRange, BallJoint, FixedJoint, FreeJoint, HingeJoint
from .joints import JointLimit as SolverLimit
from .reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow, ReachWindow

__all__ = [
    "COLOR_ROLES",
    "LimitContact",
    "LimitOverlay",
    "OverlayMesh",
    "direction_mesh",
    "hinge_mesh",
    "limit_contact",
    "limit_overlay",
    "twist_arc_mesh",
    "twist_marker_mesh",
    "window_meshes",
]

COLOR_ROLES = ("window", "window_outline", "twist", "hinge", "direction", "warning")
# Swing pushes tried around the bone by limit_contact (every 45°).
_PUSH_DIRECTIONS = 8
_Y = np.array([0.0, 1.0, 0.0])
_Z = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class OverlayMesh:
    """One drawable primitive: vertices with triangle and/or line indices, and its colour role."""

    vertices: np.ndarray  # float32 (K, 3)
    triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int32))  # int32 (T, 3)
    lines: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int32))  # int32 (L, 2)
    color_role: str = "window"

    def transformed(self, matrix: npt.ArrayLike) -> OverlayMesh:
        """The same mesh with its vertices carried by the 4×4 ``matrix`` (float32 again)."""
        m = np.asarray(matrix, dtype=np.float64).reshape(4, 4)
        points = self.vertices.astype(np.float64) @ m[:3, :3].T + m[:3, 3]
        return OverlayMesh(points.astype(np.float32), self.triangles, self.lines, self.color_role)


@dataclass(frozen=True)
class LimitContact:
    """Whether a pose sits on its limit (:func:`limit_contact`)."""

    swing: bool = False  # the bone's direction is within the tolerance of a window's rim (or outside)
    twist: bool = False  # the twist is within the tolerance of an end of its range (or outside)
    hinge: bool = False  # the hinge angle is within the tolerance of an end (or the pose is off the hinge)
    violation: float = 0.0  # the solver limit's violation (radians): 0 inside

    @property
    def at_limit(self) -> bool:
        return self.swing or self.twist or self.hinge


@dataclass(frozen=True)
class LimitOverlay:
    """All meshes for one bone's limit, already in the space of ``frame_matrix``."""

    meshes: tuple[OverlayMesh, ...]
    contact: LimitContact

    @property
    def at_limit(self) -> bool:
        return self.contact.at_limit


# --------------------------------------------------------------------------- the whole overlay


def limit_overlay(
    limit: spec.JointLimit | SolverLimit,
    frame_matrix: npt.ArrayLike,
    bone_length: float,
    pose_rotation: npt.ArrayLike | None = None,
    at_limit_tolerance: float = math.radians(1.0),
    *,
    window_scale: float = 0.6,
    twist_radius_scale: float = 0.15,
    twist_height_scale: float = 0.3,
    segments: int = 48,
) -> LimitOverlay:
    """Meshes showing ``limit`` (rig-spec or solver) for a bone, carried by ``frame_matrix``.

    ``pose_rotation`` (w, x, y, z), relative to rest, places the twist arc and the direction
    line (rest when None).  ``at_limit_tolerance`` (radians) is how close to a boundary counts
    as "on the limit" (:func:`limit_contact`): the direction line takes the ``"warning"``
    role when the swing (or hinge angle, or a fixed joint) is on its limit, the twist marker
    when the twist is.  Free and fixed joints show the direction only.  Window, outline and
    hinge meshes depend on the limit and bone only (cache them between redraws); the twist
    and direction meshes follow the pose.
    """
    if bone_length <= 0.0:
        raise ValueError(f"bone_length must be positive, got {bone_length}")
    solver = _solver(limit)
    q = quat.IDENTITY if pose_rotation is None else quat.normalize(np.asarray(pose_rotation, dtype=np.float64))
    contact = limit_contact(solver, q, at_limit_tolerance)
    meshes = list(shape_meshes(solver, window_scale * bone_length, segments))
    radius, height = twist_radius_scale * bone_length, twist_height_scale * bone_length
    meshes.extend(pose_twist_meshes(solver, q, radius, height, contact.twist, segments))
    direction_role = "warning" if (contact.swing or contact.hinge) else "direction"
    meshes.append(direction_mesh(quat.rotate_y_axis(q), bone_length, direction_role))
    return LimitOverlay(tuple(mesh.transformed(frame_matrix) for mesh in meshes), contact)


def shape_meshes(solver: SolverLimit, radius: float, segments: int = 48) -> tuple[OverlayMesh, ...]:
    """The meshes of a limit's shape, which depend on the limit and bone only: a ball joint's
    windows (surface and outline each) or a hinge's fan; none for free and fixed joints."""
    if isinstance(solver, BallJoint):
        return tuple(mesh for window in solver.windows for mesh in window_meshes(window, radius, segments))
    if isinstance(solver, HingeJoint):
        return (hinge_mesh(solver, radius, segments),)
    return ()


def pose_twist_meshes(
    solver: SolverLimit, q: np.ndarray, radius: float, height: float, on_limit: bool, segments: int = 48
) -> tuple[OverlayMesh, ...]:
    """``twist_meshes`` for a ball joint; none for the other kinds (their twist has no range)."""
    return twist_meshes(solver, q, radius, height, on_limit, segments) if isinstance(solver, BallJoint) else ()


def twist_meshes(
    solver: BallJoint, q: np.ndarray, radius: float, height: float, on_limit: bool, segments: int = 48
) -> tuple[OverlayMesh, ...]:
    """A ball joint's twist range as an arc around the bone as it points in pose ``q``, and
    the twist's marker (``"warning"`` when ``on_limit``); none when the twist is free."""
    if solver.twist_range is None or solver.twist_range.is_full_circle:
        return ()
    direction, twist = solver.split(q)
    swing = solver.untwisted(direction)  # where twist 0 puts the bone's +Z, pointing this way
    role = "warning" if on_limit else "twist"
    return (
        twist_arc_mesh(solver.twist_range, radius, height, swing, segments),
        twist_marker_mesh(float(twist), 1.3 * radius, height, swing, role),
    )


def limit_contact(
    limit: spec.JointLimit | SolverLimit, pose_rotation: npt.ArrayLike, tolerance: float = math.radians(1.0)
) -> LimitContact:
    """Whether the pose sits on its limit: beyond it, or within ``tolerance`` (radians) of it.

    Defined by pushing, which needs no distance-to-boundary formula per window shape: the
    swing is on the limit if the bone's direction is outside the windows by more than
    ``tolerance``, or if tilting it by ``tolerance`` toward any of 8 directions around it
    (every 45°) leaves the windows — i.e. clamping the pushed pose would change it.  The twist
    (and a hinge angle) likewise if twisting by ``±tolerance`` leaves the range.  A hinge is
    also flagged when the pose is off its axis by more than ``tolerance``, a fixed joint when
    it is rotated at all by more than ``tolerance``.
    """
    solver = _solver(limit)
    q = quat.normalize(np.asarray(pose_rotation, dtype=np.float64).reshape(1, 4))  # the solver works on batches
    violation = float(solver.violation(q)[0])
    if isinstance(solver, BallJoint):
        directions, twists = solver.split(q)
        swing_hit = False
        if solver.reach is not None:
            pushed = _pushed_directions(directions[0], tolerance)
            swing_hit = bool(solver.reach.angle_outside(directions)[0] > tolerance) or not bool(
                np.all(solver.reach.contains(pushed, 0.0))
            )
        twist_hit = _range_hit(solver.twist_range, float(twists[0]), tolerance)
        return LimitContact(swing=swing_hit, twist=twist_hit, violation=violation)
    if isinstance(solver, HingeJoint):
        angle = solver.angle(q)
        off_axis = float(quat.angle_between(q, quat.from_axis_angle(solver.axis, angle))[0]) > tolerance
        hit = off_axis or _range_hit(solver.angle_range, float(angle[0]), tolerance)
        return LimitContact(hinge=hit, violation=violation)
    if isinstance(solver, FixedJoint):
        return LimitContact(swing=violation > tolerance, violation=violation)
    return LimitContact(violation=violation)


# --------------------------------------------------------------------------- primitives (limit frame)


def window_meshes(window: ReachWindow, rim_distance: float, segments: int = 48) -> tuple[OverlayMesh, OverlayMesh]:
    """A solver reach window as a translucent cone (``"window"``) and its outline (``"window_outline"``).

    Vertex 0 is the joint; vertices 1…K lie on the rim at ``rim_distance``, each along a
    direction on the window's boundary, counter-clockwise seen from outside along the centre.
    """
    if isinstance(window, PolygonWindow):
        rim = window.corner_directions
        spokes = np.arange(len(rim))
    elif isinstance(window, EllipticConeWindow):
        rim = window.rim(2.0 * np.pi * np.arange(segments) / segments)
        spokes = _quarter_spokes(segments)
    elif isinstance(window, ConeWindow):
        first = quat.any_perpendicular(window.center)
        second = np.cross(first, window.center)
        angles = 2.0 * np.pi * np.arange(segments) / segments
        across = np.cos(angles)[:, None] * first + np.sin(angles)[:, None] * second
        rim = math.cos(window.half_angle) * window.center + math.sin(window.half_angle) * across
        spokes = _quarter_spokes(segments)
    else:
        raise TypeError(f"not a reach window: {window!r}")
    count = len(rim)
    vertices = np.concatenate((np.zeros((1, 3)), rim_distance * rim)).astype(np.float32)
    ring = np.arange(1, count + 1, dtype=np.int32)
    following = np.roll(ring, -1)
    triangles = np.stack((np.zeros(count, dtype=np.int32), ring, following), axis=1)
    outline = np.concatenate(
        (np.stack((ring, following), axis=1), np.stack((np.zeros(len(spokes)), spokes + 1), axis=1))
    ).astype(np.int32)
    return (
        OverlayMesh(vertices, triangles=triangles, color_role="window"),
        OverlayMesh(vertices, lines=outline, color_role="window_outline"),
    )


def twist_arc_mesh(
    twist_range: AngleRange,
    radius: float,
    height: float,
    swing: npt.ArrayLike = quat.IDENTITY,
    segments: int = 48,
    color_role: str = "twist",
) -> OverlayMesh:
    """The twist range as an arc of ``radius`` around the bone, ``height`` along it (``"twist"``).

    Vertex 0 is the arc's centre on the bone; vertex ``1 + i`` is at twist
    ``min + i·(max − min)/n``, where the bone's local +Z points after twisting by that angle:
    ``swing·(height·ŷ + radius·(sin τ, 0, cos τ))``.  Lines join the arc and run from the
    centre to both ends.
    """
    angles = _range_samples(twist_range.minimum, twist_range.maximum, segments)
    local = np.stack((radius * np.sin(angles), np.full_like(angles, height), radius * np.cos(angles)), axis=1)
    vertices = np.concatenate(([[0.0, height, 0.0]], local))
    vertices = quat.rotate(np.asarray(swing, dtype=np.float64), vertices)
    last = len(angles)
    arc = np.stack((np.arange(1, last), np.arange(2, last + 1)), axis=1)
    ends = np.array([[0, 1], [0, last]])
    return OverlayMesh(
        vertices.astype(np.float32), lines=np.concatenate((arc, ends)).astype(np.int32), color_role=color_role
    )


def twist_marker_mesh(
    twist: float, length: float, height: float, swing: npt.ArrayLike = quat.IDENTITY, color_role: str = "twist"
) -> OverlayMesh:
    """One line from the bone, ``height`` along it, to where its local +Z points at ``twist``."""
    ends = np.array([[0.0, height, 0.0], [length * math.sin(twist), height, length * math.cos(twist)]])
    vertices = quat.rotate(np.asarray(swing, dtype=np.float64), ends)
    return OverlayMesh(vertices.astype(np.float32), lines=np.array([[0, 1]], dtype=np.int32), color_role=color_role)


def hinge_mesh(hinge: HingeJoint, radius: float, segments: int = 48, color_role: str = "hinge") -> OverlayMesh:
    """A hinge's range as a fan of bone directions and its axis as a line, in one ``"hinge"`` mesh.

    Vertex 0 is the joint, vertices ``1 + i`` are ``radius·R(axis, φ_i)·r`` for φ sampled
    from the range's min to max (the whole circle when unlimited), with ``r = ŷ`` — or ``ẑ``
    made perpendicular to the axis when the axis runs along the bone (a twist hinge, where
    ŷ would not move).  The last two vertices are the axis line's ends, ``±radius·axis``.
    Triangles fan from the joint; lines outline the fan and draw the axis.
    """
    axis = hinge.axis
    across = _Y - float(_Y @ axis) * axis
    reference = _Y if np.linalg.norm(across) > 0.05 else _unit(_Z - float(_Z @ axis) * axis)
    low, high = (
        (-math.pi, math.pi) if hinge.angle_range is None else (hinge.angle_range.minimum, hinge.angle_range.maximum)
    )
    angles = _range_samples(low, high, segments)
    fan = quat.rotate(quat.from_axis_angle(axis, angles), reference) * radius
    vertices = np.concatenate((np.zeros((1, 3)), fan, [radius * axis, -radius * axis]))
    count = len(angles)
    ring = np.arange(1, count + 1)
    triangles = np.stack((np.zeros(count - 1), ring[:-1], ring[1:]), axis=1)
    lines = np.concatenate((np.stack((ring[:-1], ring[1:]), axis=1), [[0, 1], [0, count], [count + 1, count + 2]]))
    return OverlayMesh(
        vertices.astype(np.float32),
        triangles=triangles.astype(np.int32),
        lines=lines.astype(np.int32),
        color_role=color_role,
    )


def direction_mesh(direction: npt.ArrayLike, length: float, color_role: str = "direction") -> OverlayMesh:
    """The bone's direction as one line from the joint, ``length`` long."""
    end = length * _unit(np.asarray(direction, dtype=np.float64).reshape(3))
    vertices = np.stack((np.zeros(3), end)).astype(np.float32)
    return OverlayMesh(vertices, lines=np.array([[0, 1]], dtype=np.int32), color_role=color_role)


# --------------------------------------------------------------------------- helpers


def _solver(limit: spec.JointLimit | SolverLimit) -> SolverLimit:
    if isinstance(limit, (BallJoint, HingeJoint, FixedJoint, FreeJoint)):
        return limit
    return solver_limit(limit)


def _pushed_directions(direction: np.ndarray, angle: float) -> np.ndarray:
    """``direction`` tilted by ``angle`` toward 8 directions around it (every 45°)."""
    first = quat.any_perpendicular(direction)
    second = np.cross(direction, first)
    turns = 2.0 * np.pi * np.arange(_PUSH_DIRECTIONS) / _PUSH_DIRECTIONS
    across = np.cos(turns)[:, None] * first + np.sin(turns)[:, None] * second
    return math.cos(angle) * direction + math.sin(angle) * across


def _range_hit(angle_range: AngleRange | None, angle: float, tolerance: float) -> bool:
    """Whether ``angle`` is outside the range by more than ``tolerance`` or within it of an end."""
    if angle_range is None or angle_range.is_full_circle:
        return False
    if float(angle_range.distance_outside(angle)) > tolerance:
        return True
    pushed = quat.wrap_angle(np.array([angle - tolerance, angle + tolerance]))
    return not bool(np.all(angle_range.contains(pushed, 0.0)))


def _range_samples(low: float, high: float, segments: int) -> np.ndarray:
    """Angles from ``low`` to ``high`` inclusive, about ``segments`` per full turn (at least 2 steps)."""
    steps = max(2, math.ceil(segments * (high - low) / (2.0 * math.pi)))
    return np.linspace(low, high, steps + 1)


def _quarter_spokes(segments: int) -> np.ndarray:
    return np.unique((np.arange(4) * segments) // 4)


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)
