"""Command line for pipelines and other engines: solve a rig spec's chain against targets.

    python -m quat_ik_addon.solver solve RIG.json --chain arm --targets targets.json -o out.json
    python -m quat_ik_addon.solver solve-body RIG.json --chains arm.L,arm.R --targets body.json -o out.json

Targets are a JSON list of [x, y, z], a JSON object {"positions": [...], "orientations":
[[w, x, y, z], ...] or "directions": [...], "poles": [...], "pole_angles": [degrees, ...]}, or an
.npy array shaped (N, 3), all in the chain's root frame (armature space, or the rest frame of the
root bone's parent). Solves go through the same pipeline and defaults as the panel
(``request.solve_request``): the same start poses, poles, restarts and tolerance. The output JSON holds
per-target pose rotations ((w, x, y, z), each bone's rotation from its rest pose in its own rest
frame: ``pose_bone.rotation_quaternion``), errors, iterations, restarts, a converged flag and the
solver path that ran (``solver``: the native kernel, or numpy and why). ``solve-body`` solves
several chains of the spec as one body (``body.request.solve_body_request``): goals per chain,
pins, stretch. docs/headless.md describes both and every field.

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

from .body import Effector, Goal, Pin, Stretch
from .body.poles import BodyPole, chain_pole
from .body.request import BodyOptions, BodyRequest, solve_body_request
from .body.settings import BODY_TOP_RESTARTS_MAX, body_settings_from
from .chain import Chain
from .defaults import DEFAULT_SETTINGS, ORIENTATION_WEIGHT
from .goals import Goals
from .native import library
from .request import POLE_FACINGS, SolveOptions, SolveRequest, solve_request
from .rig.spec import RigSpec, RigSpecError, load_rig_spec
from .rig.spec_body import body_from_rig_spec
from .settings import KERNELS, METHODS
from .solver_path import describe as describe_solver_path

NUMPY_CHOSEN = "numpy (--kernel numpy)"  # the solver path line when the command line asks for numpy
BODY_SOLVER_PATH = "numpy (the body solver runs on numpy)"  # the native kernel solves single chains


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


def _read_json(path: Path) -> object:
    """A JSON file's data (InputError naming the file when it cannot be read)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: cannot read targets: {error}") from None


def _read_targets(path: Path) -> Targets:
    if path.suffix == ".npy":
        try:
            return Targets(Goals(np.load(path)))
        except (OSError, ValueError) as error:
            raise InputError(f"{path}: cannot read targets: {error}") from None
    data = _read_json(path)
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
    solve = commands.add_parser("solve", help="solve a chain of a rig spec against a list of targets")
    _add_files(solve, "targets: .json or .npy")
    solve.add_argument("--chain", help="chain name (default: the spec's only chain)")
    defaults = DEFAULT_SETTINGS  # the panel's defaults (request.DEFAULT_SETTINGS)
    solve.add_argument("--method", choices=METHODS, default=defaults.method)
    _add_iterations(solve, defaults.max_iterations, defaults.restarts, "stuck targets")
    _add_time_limit(solve, "restarts, a sequence's searches")
    solve.add_argument(
        "--tolerance",
        type=float,
        default=defaults.tolerance,
        help=f"position tolerance in the rig's units (default {defaults.tolerance:g}); a rotation counts within "
        "tolerance / reach radians",
    )
    solve.add_argument(
        "--orientation-weight",
        type=float,
        default=ORIENTATION_WEIGHT,
        help=f"how much a target orientation counts against the position, 0-1 (default {ORIENTATION_WEIGHT})",
    )
    solve.add_argument(
        "--pole-angle",
        type=float,
        default=0.0,
        metavar="DEGREES",
        help="turns the bend about the root-target line, with poles in the targets (default 0)",
    )
    solve.add_argument(
        "--pole-facing",
        choices=POLE_FACINGS,
        default=SolveOptions.pole_facing,
        help="what faces the pole: the bend (default) or the root bone's X axis, as Blender's IK",
    )
    _add_sequence(solve)
    solve.add_argument(
        "--ease-jumps",
        type=int,
        default=0,
        metavar="FRAMES",
        help="with --sequence: spread each jump from one solution branch to another over this many frames (default 0)",
    )
    solve.add_argument(
        "--cyclic", action="store_true", help="with --sequence: the frames loop, the last leads into the first"
    )
    _add_kernel(solve)
    solve.set_defaults(run=run, reached="converged", unit="targets")
    _add_body_command(commands)
    return parser


def _add_files(command: argparse.ArgumentParser, targets_help: str) -> None:
    command.add_argument("rig_spec", type=Path, help="rig spec JSON (docs/rig_spec.md)")
    command.add_argument("--targets", type=Path, required=True, help=targets_help)
    command.add_argument("-o", "--output", type=Path, help="output JSON (default: standard output)")


def _add_iterations(command: argparse.ArgumentParser, max_iterations: int, restarts: int, stuck: str) -> None:
    command.add_argument(
        "--restarts", type=int, default=restarts, help=f"restart rounds for {stuck} (default {restarts})"
    )
    command.add_argument("--max-iterations", type=int, default=max_iterations)


def _add_kernel(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--kernel",
        choices=KERNELS,
        default=DEFAULT_SETTINGS.kernel,
        help="auto: the native kernel where it loads (default); numpy: the numpy reference, same answers, slower",
    )


def _add_time_limit(command: argparse.ArgumentParser, improving: str) -> None:
    command.add_argument(
        "--time-limit",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"stop improving the answers after this long ({improving}); the best poses so far are kept and the "
        "output's out_of_time says so (default: no limit)",
    )


def _add_sequence(command: argparse.ArgumentParser) -> None:
    command.add_argument("--sequence", action="store_true", help="targets are frames: keep continuity between them")


def _add_body_command(commands) -> None:
    body = commands.add_parser(
        "solve-body", help="solve several chains of a rig spec as one body: goals, pins, stretch"
    )
    _add_files(body, "goals per chain, pins and stretch: .json (docs/headless.md)")
    body.add_argument("--chains", help="the chains that make the body, comma-separated (default: every chain)")
    defaults = DEFAULT_SETTINGS  # the panel's chain settings, which a body solves with (body_settings_from)
    _add_iterations(
        body,
        defaults.max_iterations,
        defaults.restarts,
        f"frames whose pins or highest-priority goals are unmet, at most {BODY_TOP_RESTARTS_MAX}, and one for lower "
        "goals unmet",
    )
    body.add_argument(
        "--tolerance",
        type=float,
        default=defaults.tolerance,
        help=f"position tolerance in the rig's units (default {defaults.tolerance:g}); a rotation counts within "
        "tolerance / size radians",
    )
    _add_kernel(body)
    _add_time_limit(body, "restarts, a sequence's repairs of jumps")
    _add_sequence(body)
    body.set_defaults(run=run_body, reached="met", unit="frames")


def _chain_name(spec_path: Path, names: list[str], given: str | None, flag: str = "--chain") -> str:
    """The chain to solve: the one ``flag`` names, else the spec's only one (InputError
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
    raise InputError(f"{flag} {given!r}: {spec_path} has no such chain; its chains: {listed}{hint}")


def _load_rig(path: Path) -> RigSpec:
    try:
        return load_rig_spec(path)
    except OSError as error:
        raise InputError(f"{path}: {error.strerror or error}") from None
    except RigSpecError as error:
        raise InputError(str(error)) from None


def run(args: argparse.Namespace) -> dict:
    """Solve as the parsed arguments say and return the output document (InputError on bad input)."""
    rig = _load_rig(args.rig_spec)
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


BODY_KEYS = ("goals", "pins", "stretch")
GOAL_KEYS = (
    "positions",
    "orientations",
    "directions",
    "position_weight",
    "orientation_weight",
    "level",
    "frames",
    "poles",
    "pole_angle",
    "pole_facing",
)
PIN_KEYS = ("bone", "position", "rotation", "frames")
STRETCH_KEYS = ("minimum", "maximum", "stiffness")


def _object(data: object, keys: tuple[str, ...], where: str) -> dict:
    """``data`` as a JSON object holding only ``keys`` (InputError naming ``where`` otherwise)."""
    if not isinstance(data, dict):
        raise InputError(f"{where} must be a JSON object, not {type(data).__name__}")
    unknown = set(data) - set(keys)
    if unknown:
        raise InputError(f"{where}: unknown keys {sorted(unknown)}; it holds {', '.join(keys)}")
    return data


def _rows_or_none(data: dict, key: str) -> np.ndarray | None:
    """A target list as floats, a ``null`` row switched off (NaN); None when absent."""
    if key not in data:
        return None
    value = data[key]
    if isinstance(value, list) and any(row is None for row in value):
        size = next((len(row) for row in value if isinstance(row, list)), 3)
        value = [[math.nan] * size if row is None else row for row in value]
    return np.asarray(value, dtype=float)


def _within_frames(targets: list[np.ndarray | None], frames: object, count: int, where: str) -> list:
    """The targets switched off (NaN) outside ``frames`` ([first, last] rows, inclusive)."""
    if frames is None:
        return targets
    if not (
        isinstance(frames, list)
        and len(frames) == 2
        and all(isinstance(f, int) and not isinstance(f, bool) for f in frames)
        and 0 <= frames[0] <= frames[1] < count
    ):
        raise InputError(f"{where}: 'frames' must be [first, last] rows within 0-{count - 1}, not {frames!r}")
    out = []
    for target in targets:
        if target is not None:
            target = np.array(np.broadcast_to(target, (count, target.shape[-1])) if target.ndim == 1 else target)
            target[: frames[0]] = np.nan
            target[frames[1] + 1 :] = np.nan
        out.append(target)
    return out


def _body_targets(
    path: Path, chains: dict[str, Chain]
) -> tuple[dict[str, Goal], list[Pin], dict[str, Stretch], list[BodyPole]]:
    """Goals (one per chain named in the file, at its effector), pins, stretch and the chains'
    poles from a body targets file (docs/headless.md)."""
    data = _object(_read_json(path), BODY_KEYS, f"{path}")
    try:
        goal_data = _object(data.get("goals", {}), tuple(chains), f"{path}: 'goals' (by chain of --chains)")
        pin_data = data.get("pins", [])
        if not isinstance(pin_data, list):
            raise InputError(f"{path}: 'pins' must be a list of objects")
        stretch_data = data.get("stretch", {})
        if not isinstance(stretch_data, dict):
            raise InputError(f"{path}: 'stretch' must be an object: bone name → its stretch")
        stretch = {
            bone: Stretch(**_object(entry, STRETCH_KEYS, f"{path}: stretch of {bone!r}"))
            for bone, entry in stretch_data.items()
        }
        goals_read = {
            name: (
                _object(entry, GOAL_KEYS, f"{path}: goal of {name!r}"),
                [_rows_or_none(entry, key) for key in ("positions", "orientations", "directions", "poles")],
            )
            for name, entry in goal_data.items()
        }
        pins_read = []
        for k, entry in enumerate(pin_data):
            entry = _object(entry, PIN_KEYS, f"{path}: pin {k}")
            if not isinstance(entry.get("bone"), str):
                raise InputError(f"{path}: pin {k} needs a 'bone' name")
            pins_read.append((entry, [_rows_or_none(entry, key) for key in ("position", "rotation")]))
        lists = [t for _, ts in (*goals_read.values(), *pins_read) for t in ts if t is not None and t.ndim == 2]
        count = max((len(t) for t in lists), default=1)
        goals, poles = {}, []
        for name, (entry, targets) in goals_read.items():
            position, orientation, direction, pole_positions = _within_frames(
                targets, entry.get("frames"), count, f"{path}: goal of {name!r}"
            )
            weights = {key: entry[key] for key in ("position_weight", "orientation_weight", "level") if key in entry}
            goals[name] = Goal(Effector.of_chain(chains[name]), position, orientation, direction, **weights)
            if pole_positions is not None:
                poles.append(_chain_pole(path, name, chains, entry, pole_positions))
        pins = []
        for k, (entry, targets) in enumerate(pins_read):
            position, rotation = _within_frames(targets, entry.get("frames"), count, f"{path}: pin {k}")
            pins.append(Pin(entry["bone"], position, rotation))
    except (TypeError, ValueError, OverflowError) as error:
        raise InputError(f"{path}: {error}") from None
    return goals, pins, stretch, poles


def _chain_pole(path: Path, name: str, chains: dict[str, Chain], entry: dict, positions: np.ndarray) -> BodyPole:
    """The pole of chain ``name`` in the body (``body.poles.chain_pole``); the angle in degrees."""
    facing = entry.get("pole_facing", SolveOptions.pole_facing)
    others = [chain.bone_names for other, chain in chains.items() if other != name]
    angle = np.radians(np.asarray(entry.get("pole_angle", 0.0), dtype=float))
    pole = chain_pole(chains[name].bone_names, others, positions, angle, facing)
    if pole is None:
        raise InputError(
            f"{path}: the pole of {name!r} has no bones of its own to turn: the chain shares all but "
            f"{'none' if facing == 'root_x' else 'its last'} of its bones with the other chains"
        )
    return pole


def body_options(args: argparse.Namespace) -> BodyOptions:
    """``solve-body``'s flags as ``BodyOptions``: the chain settings they name, made body settings
    as the panel makes them (ValueError for a bad value)."""
    if not (math.isfinite(args.tolerance) and args.tolerance >= 0):
        raise ValueError(f"--tolerance must be a number >= 0, not {args.tolerance}")
    chain_settings = replace(
        DEFAULT_SETTINGS,
        max_iterations=args.max_iterations,
        restarts=args.restarts,
        tolerance=args.tolerance,
        kernel=args.kernel,
    )
    return BodyOptions(settings=body_settings_from(chain_settings), time_limit=args.time_limit)


def run_body(args: argparse.Namespace) -> dict:
    """``solve-body``: the chains as one body against a body targets file; the output document
    (InputError on bad input)."""
    rig = _load_rig(args.rig_spec)
    names = [chain.name for chain in rig.chains]
    given = names if args.chains is None else [name.strip() for name in args.chains.split(",")]
    chain_names = [_chain_name(args.rig_spec, names, name, "--chains") for name in given]
    if len(set(chain_names)) != len(chain_names) or not chain_names:
        raise InputError(f"--chains {args.chains!r}: name each chain once")
    try:
        chains = {name: Chain.from_rig_spec(rig, name) for name in chain_names}
    except ValueError as error:
        raise InputError(f"--chains: {error}") from None
    goals, pins, stretch, poles = _body_targets(args.targets, chains)
    try:
        body = body_from_rig_spec(rig, chain_names, stretch)
        options = body_options(args)
        request = BodyRequest(list(goals.values()), pins, shot=args.sequence, poles=poles)
        result = solve_body_request(body, request, options)
    except ValueError as error:
        raise InputError(str(error)) from None
    return {
        "chains": chain_names,
        "solver": BODY_SOLVER_PATH,
        "bones": list(body.bone_names),
        "goals": list(goals),
        "pins": [pin.bone for pin in pins],
        "levels": list(result.levels),
        "tolerance": result.tolerance,
        "angle_tolerance": result.angle_tolerance,
        "met": result.all_met.tolist(),
        "level_met": result.level_met.tolist(),
        "pins_held": result.pins_held.tolist(),
        "position_error": result.position_error.tolist(),
        "orientation_error": result.orientation_error.tolist(),
        "pin_position_error": result.pin_position_error.tolist(),
        "pin_rotation_error": result.pin_rotation_error.tolist(),
        "iterations": result.iterations.tolist(),
        "restarts": result.restarts.tolist(),
        "rotations": result.rotations.tolist(),
        "stretch": result.stretch.tolist(),
        "out_of_time": result.out_of_time,
    }


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        document = args.run(args)
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
    reached = document[args.reached]
    print(f"{sum(reached)}/{len(reached)} {args.unit} reached", file=sys.stderr)
    return 0
