"""Euler angles in Blender's conventions: both ways between Euler triples and quaternions,
and the two triples every rotation has (what Blender's rotate tool and ``Quaternion.to_euler``
choose between). The bake's Euler curves, the channel locks and the sampled inputs of a bake
share it. The other triple's angles are wrapped into (−π, π] by ``quaternion.wrap_angle``, the
package's one wrap.
"""

from __future__ import annotations

import numpy as np

from . import quaternion as quat

EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
_AXES = "XYZ"


def _axis_rotation(axis: int, angle: np.ndarray) -> np.ndarray:
    half = 0.5 * angle
    q = np.zeros((*np.shape(angle), 4))
    q[..., 0] = np.cos(half)
    q[..., 1 + axis] = np.sin(half)
    return q


def euler_to_quaternion(euler: np.ndarray, order: str) -> np.ndarray:
    """(…, 3) Euler angles (by axis X, Y, Z) in Blender's ``order`` to (…, 4) quaternions.

    Blender's order "XYZ" applies X first: R = Rz·Ry·Rx (mathutils.Euler.to_matrix).
    """
    euler = np.asarray(euler, dtype=float)
    i, j, k = (_AXES.index(c) for c in order)
    q = _axis_rotation(i, euler[..., i])
    q = quat.multiply(_axis_rotation(j, euler[..., j]), q)
    return quat.multiply(_axis_rotation(k, euler[..., k]), q)


def quaternion_to_euler(q: np.ndarray, order: str) -> np.ndarray:
    """(…, 4) quaternions to (…, 3) Euler angles (by axis) for R = R_k(c)·R_j(b)·R_i(a).

    Shoemake's Tait-Bryan extraction (Graphics Gems IV, "Euler angle conversion"), with the
    sign of the permutation (i, j, k) deciding the signs.
    """
    m = quat.to_matrix(q)
    i, j, k = (_AXES.index(c) for c in order)
    sign = 1.0 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1.0
    out = np.empty((*np.shape(q)[:-1], 3))
    out[..., j] = np.arcsin(np.clip(-sign * m[..., k, i], -1.0, 1.0))
    out[..., i] = np.arctan2(sign * m[..., k, j], m[..., k, k])
    out[..., k] = np.arctan2(sign * m[..., j, i], m[..., i, i])
    return out


def other_triple(euler: np.ndarray, order: str) -> np.ndarray:
    """(…, 3) Euler angles (by axis) of the same rotations as ``euler``, the other triple:
    a + π, π − b, c + π for the order's first, middle and last axes (not wrapped)."""
    i, j, k = (_AXES.index(axis) for axis in order)
    other = np.array(euler, dtype=float)
    other[..., i] += np.pi
    other[..., j] = np.pi - other[..., j]
    other[..., k] += np.pi
    return other


def both_triples(quaternions: np.ndarray, order: str) -> tuple[np.ndarray, np.ndarray]:
    """(F, 3) each: the triple with the middle angle within ±90° and the other one, by axis."""
    first = quaternion_to_euler(quaternions, order)
    return first, quat.wrap_angle(other_triple(first, order))


def smallest_euler(q: np.ndarray, order: str) -> np.ndarray:
    """(…, 3) Euler angles of (…, 4) quaternions: of the two triples, the one with the smaller
    sum of absolute angles (Blender's ``quat_to_eul`` rule; ties keep the first)."""
    flat = np.asarray(q, dtype=float).reshape(-1, 4)
    first, other = both_triples(flat, order)
    better = np.sum(np.abs(first), axis=1) > np.sum(np.abs(other), axis=1)
    return np.where(better[:, None], other, first).reshape(*np.shape(q)[:-1], 3)
