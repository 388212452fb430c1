"""The kernel's C ABI as ctypes types: kernel/qik.h, field for field.

Change both together, and bump ``INTERFACE_VERSION`` with ``QIK_INTERFACE_VERSION``: a library
built for another version is refused at load (``library.py``).
"""

from __future__ import annotations

import ctypes

INTERFACE_VERSION = 4

# Status codes.
OK, BAD_INPUT, NOT_FINITE = 0, 1, 2

# Joint kinds and flags.
FREE, FIXED, HINGE, BALL = 0, 1, 2, 3
HAS_RANGE, BOUNDARY_MODE, FAST_PATHS, TWIST_REFERENCE = 1, 2, 4, 8

# Window kinds.
CONE, ELLIPSE, POLYGON = 0, 1, 2

# Goal kinds.
POSITION, ORIENTATION, DIRECTION = 0, 1, 2

# What a body task asks (qik_body_tasks.flags).
TASK_POSITION, TASK_ORIENTATION, TASK_DIRECTION = 1, 2, 4

# Methods, in solver/settings.py's names, and sweep orders.
METHODS = {"ccd": 0, "dls": 1, "ccd_dls": 2, "dls_ccd": 3, "jacobian_transpose": 4}
ORDERS = {"tip_to_base": 0, "base_to_tip": 1}

_double_p = ctypes.POINTER(ctypes.c_double)


class Joint(ctypes.Structure):
    _fields_ = (
        ("kind", ctypes.c_int32),
        ("flags", ctypes.c_int32),
        ("window_first", ctypes.c_int32),
        ("window_count", ctypes.c_int32),
        ("stiffness", ctypes.c_double),
        ("share", ctypes.c_double),
        ("axis", ctypes.c_double * 3),
        ("range_min", ctypes.c_double),
        ("range_max", ctypes.c_double),
        ("twist_reference", ctypes.c_double * 4),
    )


class Window(ctypes.Structure):
    _fields_ = (
        ("kind", ctypes.c_int32),
        ("orthonormal", ctypes.c_int32),
        ("corner_first", ctypes.c_int32),
        ("corner_count", ctypes.c_int32),
        ("center", ctypes.c_double * 3),
        ("plane_x", ctypes.c_double * 3),
        ("plane_y", ctypes.c_double * 3),
        ("half_angle", ctypes.c_double),
        ("radii", ctypes.c_double * 2),
        ("accept_axis", ctypes.c_double * 3),
        ("accept_cos", ctypes.c_double),
        ("reference", ctypes.c_double * 3),
    )


class ChainStruct(ctypes.Structure):
    _fields_ = (
        ("n_bones", ctypes.c_int32),
        ("n_windows", ctypes.c_int32),
        ("n_corners", ctypes.c_int32),
        ("has_shares", ctypes.c_int32),
        ("rest_rotations", _double_p),
        ("rest_offsets", _double_p),
        ("step_vectors", _double_p),
        ("joints", ctypes.POINTER(Joint)),
        ("windows", ctypes.POINTER(Window)),
        ("corner_directions", _double_p),
        ("edge_normals", _double_p),
        ("reach", ctypes.c_double),
    )


class GoalsStruct(ctypes.Structure):
    _fields_ = (
        ("kind", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("positions", ctypes.c_void_p),  # addresses: rebuilt every call, so the cheap kind
        ("orientations", ctypes.c_void_p),
        ("directions", ctypes.c_void_p),
        ("aim_axis", ctypes.c_double * 3),
        ("position_weight", ctypes.c_double),
        ("orientation_weight", ctypes.c_double),
    )


class SettingsStruct(ctypes.Structure):
    _fields_ = (
        ("method", ctypes.c_int32),
        ("order", ctypes.c_int32),
        ("max_iterations", ctypes.c_int32),
        ("stall_iterations", ctypes.c_int32),
        ("ccd_iterations_before_dls", ctypes.c_int32),
        ("finish_max_iterations", ctypes.c_int32),
        ("finish_stall_iterations", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("tolerance", ctypes.c_double),
        ("angle_tolerance", ctypes.c_double),
        ("stall_ratio", ctypes.c_double),
        ("finish_stall_ratio", ctypes.c_double),
        ("damping", ctypes.c_double),
        ("rest_pull", ctypes.c_double),
    )


class SolveCallStruct(ctypes.Structure):
    _fields_ = (
        ("chain", ctypes.c_void_p),  # addresses, as the array fields below
        ("goals", ctypes.c_void_p),
        ("settings", ctypes.c_void_p),
        ("rows", ctypes.c_int64),
        ("starts", ctypes.c_void_p),
        ("rotations", ctypes.c_void_p),
        ("preferred", ctypes.c_void_p),
        ("carry_tip_twist", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("iterations", ctypes.c_void_p),  # int64
        ("position_error", ctypes.c_void_p),
        ("orientation_error", ctypes.c_void_p),
        ("effector", ctypes.c_void_p),
        ("met", ctypes.c_void_p),  # uint8 (numpy bool)
    )


# What a restart round takes for a row (qik.h QIK_TAKE_*).
TAKE_CLOSER, TAKE_GAIN, TAKE_MET = 0, 1, 2


class RestartStruct(ctypes.Structure):
    _fields_ = (
        ("rows", ctypes.c_int64),
        ("rotations", ctypes.c_void_p),
        ("position_error", ctypes.c_void_p),
        ("orientation_error", ctypes.c_void_p),
        ("iterations", ctypes.c_void_p),  # int64
        ("reference", ctypes.c_void_p),
        ("preferred", ctypes.c_void_p),
        ("unmet", ctypes.c_int64),
        ("unmet_rows", ctypes.c_void_p),  # int64
        ("candidates", ctypes.c_int64),
        ("starts", ctypes.c_void_p),
        ("take_rule", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("switch_gain", ctypes.c_double),
        ("tie", ctypes.c_double),
        ("taken", ctypes.c_void_p),  # uint8
    )


class ShotStruct(ctypes.Structure):
    _fields_ = (
        ("frames", ctypes.c_int64),
        ("rotations", ctypes.c_void_p),
        ("met", ctypes.c_void_p),  # uint8
        ("solved", ctypes.c_void_p),  # uint8
        ("iterations", ctypes.c_void_p),  # int64
        ("answers", ctypes.c_void_p),
        ("answer_position_error", ctypes.c_void_p),
        ("answer_orientation_error", ctypes.c_void_p),
        ("answer_effector", ctypes.c_void_p),
    )


class WalkStruct(ctypes.Structure):
    _fields_ = (
        ("order_count", ctypes.c_int64),
        ("order", ctypes.c_void_p),  # int64 throughout
        ("walkers", ctypes.c_int64),
        ("seeds", ctypes.c_void_p),
        ("directions", ctypes.c_void_p),
        ("until", ctypes.c_void_p),
        ("margin", ctypes.c_double),
    )


class RepairStruct(ctypes.Structure):
    _fields_ = (
        ("order_count", ctypes.c_int64),
        ("order", ctypes.c_void_p),  # int64
        ("carry_frames", ctypes.c_int64),
        ("blend_rounds", ctypes.c_int64),
        ("jump_slack", ctypes.c_double),
        ("visible_jump", ctypes.c_double),
    )


class FillStruct(ctypes.Structure):
    _fields_ = (
        ("followed_count", ctypes.c_int64),
        ("followed", ctypes.c_void_p),  # int64
        ("between_count", ctypes.c_int64),
        ("between", ctypes.c_void_p),  # int64
        ("guesses", ctypes.c_void_p),
        ("carry_tip_twist", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("margin", ctypes.c_double),
    )


class FollowStruct(ctypes.Structure):
    _fields_ = (
        ("followed_count", ctypes.c_int64),
        ("followed", ctypes.c_void_p),  # int64
        ("pieces", ctypes.c_int64),
        ("begins", ctypes.c_void_p),  # int64
        ("ends", ctypes.c_void_p),  # int64
        ("pose", ctypes.c_void_p),
        ("met", ctypes.c_void_p),  # uint8
        ("poses", ctypes.c_void_p),
        ("poses_met", ctypes.c_void_p),  # uint8
    )


class BodyStruct(ctypes.Structure):
    _fields_ = (
        ("n_bones", ctypes.c_int32),
        ("n_stretchy", ctypes.c_int32),
        ("parents", ctypes.c_void_p),  # int32
        ("stretchy", ctypes.c_void_p),  # int32
        ("rest_rotations", ctypes.c_void_p),
        ("rest_offsets", ctypes.c_void_p),
        ("lengths", ctypes.c_void_p),
        ("turn_shares", ctypes.c_void_p),
        ("hinge_axes", ctypes.c_void_p),
        ("stretch_low", ctypes.c_void_p),
        ("stretch_high", ctypes.c_void_p),
        ("stretch_shares", ctypes.c_void_p),
        ("limits", ctypes.POINTER(ChainStruct)),
        ("size", ctypes.c_double),
    )


class BodyTasksStruct(ctypes.Structure):
    _fields_ = (
        ("n_tasks", ctypes.c_int32),
        ("n_levels", ctypes.c_int32),
        ("bones", ctypes.c_void_p),  # int32
        ("flags", ctypes.c_void_p),  # int32
        ("level_of", ctypes.c_void_p),  # int32
        ("points", ctypes.c_void_p),
        ("aim_axes", ctypes.c_void_p),
        ("position_weights", ctypes.c_void_p),
        ("orientation_weights", ctypes.c_void_p),
        ("positions", ctypes.c_void_p),
        ("orientations", ctypes.c_void_p),
        ("directions", ctypes.c_void_p),
    )


class BodySettingsStruct(ctypes.Structure):
    _fields_ = (
        ("max_iterations", ctypes.c_int32),
        ("polish_iterations", ctypes.c_int32),
        ("stall_iterations", ctypes.c_int32),
        ("lean", ctypes.c_int32),
        ("use_stretch", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("damping", ctypes.c_double),
        ("stall_ratio", ctypes.c_double),
        ("noticeable", ctypes.c_double),
        ("creep", ctypes.c_double),
        ("working_tolerance", ctypes.c_double),
        ("working_angle_tolerance", ctypes.c_double),
        ("tolerance", ctypes.c_double),
        ("angle_tolerance", ctypes.c_double),
    )


# Every exported function: (name, result type, argument types). Arrays cross as addresses
# (``ndarray.ctypes.data``, c_void_p): building a typed ctypes pointer costs microseconds a call.
_array = ctypes.c_void_p
FUNCTIONS = (
    ("qik_interface_version", ctypes.c_int32, ()),
    ("qik_clamp", ctypes.c_int32, (ctypes.POINTER(ChainStruct), ctypes.c_int64, _array)),
    ("qik_violation", ctypes.c_int32, (ctypes.POINTER(ChainStruct), ctypes.c_int64, _array, _array)),
    (
        "qik_run_method",
        ctypes.c_int32,
        (
            ctypes.POINTER(ChainStruct),
            ctypes.POINTER(GoalsStruct),
            ctypes.POINTER(SettingsStruct),
            ctypes.c_int64,
            _array,  # rotations
            _array,  # preferred or None
            _array,  # iterations (int64)
            _array,  # position error
            _array,  # orientation error
            _array,  # effector
        ),
    ),
    ("qik_carry_tip_twist", ctypes.c_int32, (ctypes.POINTER(ChainStruct), ctypes.c_int64, _array, _array)),
    ("qik_solve", ctypes.c_int32, (_array,)),  # the address of a SolveCallStruct
    (
        "qik_measure",
        ctypes.c_int32,
        (
            ctypes.POINTER(ChainStruct),
            ctypes.POINTER(GoalsStruct),
            ctypes.c_int64,
            _array,  # rotations
            _array,  # position error (out)
            _array,  # orientation error (out)
            _array,  # effector (out)
        ),
    ),
    ("qik_pose_distance_rows", ctypes.c_int32, (ctypes.c_int32, ctypes.c_int64, _array, _array, _array)),
    (
        "qik_restart_round",
        ctypes.c_int32,
        (
            ctypes.POINTER(ChainStruct),
            ctypes.POINTER(GoalsStruct),
            ctypes.POINTER(SettingsStruct),
            ctypes.POINTER(RestartStruct),
        ),
    ),
    (
        "qik_walk_out",
        ctypes.c_int32,
        (
            ctypes.POINTER(ChainStruct),
            ctypes.POINTER(GoalsStruct),
            ctypes.POINTER(SettingsStruct),  # where the step before met its goal
            ctypes.POINTER(SettingsStruct),  # where it missed
            ctypes.POINTER(ShotStruct),
            ctypes.POINTER(WalkStruct),
        ),
    ),
    (
        "qik_follow",
        ctypes.c_int32,
        (
            ctypes.POINTER(ChainStruct),
            ctypes.POINTER(GoalsStruct),
            ctypes.POINTER(SettingsStruct),  # where the step before met its goal
            ctypes.POINTER(SettingsStruct),  # where it missed
            ctypes.POINTER(ShotStruct),
            ctypes.POINTER(FollowStruct),
        ),
    ),
    (
        "qik_repair_jumps",
        ctypes.c_int32,
        (
            ctypes.POINTER(ChainStruct),
            ctypes.POINTER(GoalsStruct),
            ctypes.POINTER(SettingsStruct),
            ctypes.POINTER(ShotStruct),
            ctypes.POINTER(RepairStruct),
        ),
    ),
    (
        "qik_fill_between",
        ctypes.c_int32,
        (
            ctypes.POINTER(ChainStruct),
            ctypes.POINTER(GoalsStruct),
            ctypes.POINTER(SettingsStruct),  # where both neighbours met their goals
            ctypes.POINTER(SettingsStruct),  # where one missed
            ctypes.POINTER(ShotStruct),
            ctypes.POINTER(FillStruct),
        ),
    ),
    (
        "qik_body_stage",
        ctypes.c_int32,
        (
            ctypes.POINTER(BodyStruct),
            ctypes.POINTER(BodyTasksStruct),
            ctypes.POINTER(BodySettingsStruct),
            ctypes.c_int64,
            _array,  # rotations (in place)
            _array,  # stretch (in place)
            _array,  # iterations (int64, out)
            _array,  # excess (out)
        ),
    ),
    (
        "qik_body_task_errors",
        ctypes.c_int32,
        (
            ctypes.POINTER(BodyStruct),
            ctypes.POINTER(BodyTasksStruct),
            ctypes.c_int64,
            _array,  # rotations
            _array,  # stretch
            _array,  # position error (out)
            _array,  # orientation error (out)
        ),
    ),
    (
        "qik_carry_tip_twist_along",
        ctypes.c_int32,
        (ctypes.POINTER(ChainStruct), ctypes.c_int64, _array, _array),  # rotations (in place), start
    ),
)


def declare(library: ctypes.CDLL) -> None:
    """Give every exported function its argument and result types (AttributeError if missing)."""
    for name, result, arguments in FUNCTIONS:
        function = getattr(library, name)
        function.restype = result
        function.argtypes = arguments
