"""Command line for pipelines and other engines: solve a rig spec's chain against targets.

    python -m quat_ik_addon.solver solve RIG.json --chain arm --targets targets.json -o out.json

Targets are a JSON list of [x, y, z], a JSON object {"positions": [...], "orientations":
[[w, x, y, z], ...] or "directions": [...], "poles": [...], "pole_angles": [degrees, ...]}, or an
.npy array shaped (N, 3), all in the chain's root frame (armature space, or the rest frame of the
root bone's parent). Solves go through the same pipeline and defaults as the panel
(``request.solve_request``): the same start poses, poles, restarts and tolerance. The output JSON holds
per-target pose rotations ((w, x, y, z), each bone's rotation from its rest pose in its own rest
frame: ``pose_bone.rotation_quaternion``), errors, iterations, restarts, a converged flag and the
solver path that ran (``solver``: the native kernel, or numpy and why). docs/headless.md
describes every field.

``--version`` prints the add-on's version and the solver path this machine runs; ``solve
--kernel numpy`` solves on the numpy reference even where the native kernel loads.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .chain import Chain
from .defaults import DEFAULT_SETTINGS, ORIENTATION_WEIGHT
from .goals import Goals
from .native import library
from .request import POLE_FACINGS, SolveOptions, SolveRequest, solve_request
from .rig.spec import RigSpecError, load_rig_spec
from .settings import KERNELS, METHODS
from .solver_path import describe as describe_solver_path

NUMPY_CHOSEN = "numpy (--kernel numpy)"  # the solver path line when the command line asks for numpy


class InputError(Exception):
    """Bad input on the command line: reported in one line, exit status 2."""


TARGET_KEYS = ("positions", "orientations", "directions", "poles", "pole_angles")


@dataclass(frozen=True)
class Targets:
    """A targets file: goals, and the poles the chain bends toward (root frame) when it gives them."""

    goals: Goals
    poles: np.ndarray | None = None
    pole_angles: np.ndarray | None = None  # radians


def _optional(data: dict, key: str) -> np.ndarray | None:
    return None if key not in data else np.asarray(data[key], dtype=float)


def _read_targets(path: Path) -> Targets:
    try:
        if path.suffix == ".npy":
            return Targets(Goals(np.load(path)))
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: cannot read targets: {error}") from None
    try:
        if not isinstance(data, dict):
            return Targets(Goals(np.asarray(data, dtype=float)))
        unknown = set(data) - set(TARGET_KEYS)
        if unknown:
            raise InputError(f"{path}: unknown keys {sorted(unknown)}; a targets object holds {', '.join(TARGET_KEYS)}")
        goals = Goals(
            np.asarray(data["positions"], dtype=float),
            _optional(data, "orientations"),
            _optional(data, "directions"),
        )
        poles, angles = _optional(data, "poles"), _optional(data, "pole_angles")
        if angles is not None:
            angles = np.radians(angles)
        if poles is not None and (poles.shape != (goals.count, 3) or not np.all(np.isfinite(poles))):
            raise InputError(f"{path}: 'poles' must be {goals.count} finite [x, y, z] points, one per target")
        if angles is not None and (angles.shape != (goals.count,) or not np.all(np.isfinite(angles))):
            raise InputError(f"{path}: 'pole_angles' must be {goals.count} finite angles in degrees, one per target")
        if angles is not None and poles is None:
            raise InputError(f"{path}: 'pole_angles' without 'poles'")
        return Targets(goals, poles, angles)
    except KeyError:
        raise InputError(f"{path}: a targets object needs a 'positions' list") from None
    except (TypeError, ValueError, OverflowError) as error:  # OverflowError: an integer past float range
        raise InputError(f"{path}: {error}") from None


def version_text() -> str:
    """Two lines for ``--version``: the add-on's version and the solver path this machine runs
    (the native kernel, or numpy and why: ``QUAT_IK_NATIVE=0``, no library for the platform...)."""
    from .. import bl_info  # the package's registration module: imports no bpy

    return f"quat-ik {'.'.join(map(str, bl_info['version']))}\nsolver: {describe_solver_path()}"


class VersionAction(argparse.Action):
    """``--version``: print ``version_text()`` and exit 0, whatever else the command line holds
    (as argparse's own ``version`` action, whose text is fixed before parsing)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        kwargs.setdefault("help", "print the add-on's version and the solver path (native kernel or numpy), then exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(version_text())
        parser.exit(0)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m quat_ik_addon.solver", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action=VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("solve", help="solve a chain of a rig spec against a list of targets")
    run.add_argument("rig_spec", type=Path, help="rig spec JSON (docs/rig_spec.md)")
    run.add_argument("--chain", help="chain name (default: the spec's only chain)")
    run.add_argument("--targets", type=Path, required=True, help="targets: .json or .npy")
    run.add_argument("-o", "--output", type=Path, help="output JSON (default: standard output)")
    defaults = DEFAULT_SETTINGS  # the panel's defaults (request.DEFAULT_SETTINGS)
    run.add_argument("--method", choices=METHODS, default=defaults.method)
    run.add_argument(
        "--restarts",
        type=int,
        default=defaults.restarts,
        help=f"restart rounds for stuck targets (default {defaults.restarts})",
    )
    run.add_argument("--max-iterations", type=int, default=defaults.max_iterations)
    run.add_argument(
        "--time-limit",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop improving the answers after this long (restarts, a sequence's searches); the best poses so far "
        "are kept and the output's out_of_time says so (default: no limit)",
    )
    run.add_argument(
        "--tolerance",
        type=float,
        default=defaults.tolerance,
        help=f"position tolerance in the rig's units (default {defaults.tolerance:g}); a rotation counts within "
        "tolerance / reach radians",
    )
    run.add_argument(
        "--orientation-weight",
        type=float,
        default=ORIENTATION_WEIGHT,
        help=f"how much a target orientation counts against the position, 0-1 (default {ORIENTATION_WEIGHT})",
    )
    run.add_argument(
        "--pole-angle",
        type=float,
        default=0.0,
        metavar="DEGREES",
        help="turns the bend about the root-target line, with poles in the targets (default 0)",
    )
    run.add_argument(
        "--pole-facing",
        choices=POLE_FACINGS,
        default=SolveOptions.pole_facing,
        help="what faces the pole: the bend (default) or the root bone's X axis, as Blender's IK",
    )
    run.add_argument("--sequence", action="store_true", help="targets are frames: keep continuity between them")
    run.add_argument(
        "--ease-jumps",
        type=int,
        default=0,
        metavar="FRAMES",
        help="with --sequence: spread each jump from one solution branch to another over this many frames (default 0)",
    )
    run.add_argument(
        "--cyclic", action="store_true", help="with --sequence: the frames loop, the last leads into the first"
    )
    run.add_argument(
        "--kernel",
        choices=KERNELS,
        default=DEFAULT_SETTINGS.kernel,
        help="auto: the native kernel where it loads (default); numpy: the numpy reference, same answers, slower",
    )
    return parser


def _chain_name(spec_path: Path, names: list[str], given: str | None) -> str:
    """The chain to solve: the one ``--chain`` names, else the spec's only one (InputError
    naming what was given and the chains there are, otherwise)."""
    listed = ", ".join(repr(name) for name in names)
    if not names:
        raise InputError(f"{spec_path}: the rig spec has no chains")
    if given is None:
        if len(names) == 1:
            return names[0]
        raise InputError(f"{spec_path} has {len(names)} chains ({listed}): name one with --chain")
    if given in names:
        return given
    alike = [name for name in names if name.casefold() == given.casefold()]
    hint = f" (names are case-sensitive: did you mean {alike[0]!r}?)" if alike else ""
    raise InputError(f"--chain {given!r}: {spec_path} has no such chain; its chains: {listed}{hint}")


def run(args: argparse.Namespace) -> dict:
    """Solve as the parsed arguments say and return the output document (InputError on bad input)."""
    try:
        rig = load_rig_spec(args.rig_spec)
    except OSError as error:
        raise InputError(f"{args.rig_spec}: {error.strerror or error}") from None
    except RigSpecError as error:
        raise InputError(str(error)) from None
    chain_name = _chain_name(args.rig_spec, [chain.name for chain in rig.chains], args.chain)
    try:
        chain = Chain.from_rig_spec(rig, chain_name)
    except ValueError as error:
        raise InputError(f"chain '{chain_name}': {error}") from None
    targets = _read_targets(args.targets)
    if (args.ease_jumps or args.cyclic) and not args.sequence:
        raise InputError("--ease-jumps and --cyclic need --sequence")
    try:
        settings = replace(
            DEFAULT_SETTINGS,
            method=args.method,
            restarts=args.restarts,
            max_iterations=args.max_iterations,
            tolerance=None if args.tolerance == 0 else args.tolerance,  # 0: relative to the reach, as the panel
            time_limit=args.time_limit,
            kernel=args.kernel,
        )
        options = SolveOptions(
            settings=settings,
            pole_angle=math.radians(args.pole_angle),
            pole_facing=args.pole_facing,
            ease_jumps=args.ease_jumps,
            cyclic=args.cyclic,
            orientation_weight=args.orientation_weight,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    request = SolveRequest(targets.goals, poles=targets.poles, pole_angles=targets.pole_angles, shot=args.sequence)
    numpy_only = args.kernel == "numpy"
    # The settings keep the solve's methods on numpy; numpy_only() also its limit clamping.
    with library.numpy_only() if numpy_only else contextlib.nullcontext():
        result = solve_request(chain, request, options)
    return {
        "chain": chain_name,
        "solver": NUMPY_CHOSEN if numpy_only else describe_solver_path(chain),
        "bones": list(chain.bone_names),
        "tolerance": result.tolerance,
        "converged": result.converged.tolist(),
        "position_error": result.position_error.tolist(),
        "orientation_error": result.orientation_error.tolist(),
        "iterations": result.iterations.tolist(),
        "restarts": result.restarts.tolist(),
        "rotations": result.rotations.tolist(),
        "out_of_time": result.out_of_time,
        "wrap_jump": result.wrap_jump,
    }


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        document = run(args)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    text = json.dumps(document, indent=1)
    if args.output:
        try:
            args.output.write_text(text)
        except OSError as error:
            print(f"error: cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
            return 2
    else:
        print(text)
    reached = sum(document["converged"])
    print(f"{reached}/{len(document['converged'])} targets reached", file=sys.stderr)
    return 0
