"""Whole bodies: a tree of bones with several effectors solved as one (issue 36).

A ``Body`` (bones with parents, rest frames, the same joint limits as ``Chain``, and
``Stretch`` per bone) is reached for by ``Goal``s at priority levels and held by ``Pin``s;
``solve_body`` solves them all at once by prioritised damped least squares and returns a
``BodyResult``. Each stage runs on the native kernel where it loaded (``solver/native/body_calls``),
else on numpy, the reference.
"""

from .goals import Effector, Goal, Pin
from .settings import BodyResult, BodySettings
from .skeleton import Body, BodyPose
from .solve import solve_body
from .stretch import Stretch

__all__ = ["Body", "BodyPose", "BodyResult", "BodySettings", "Effector", "Goal", "Pin", "Stretch", "solve_body"]
