"""Command line for pipelines and other engines: solve a rig spec's chain against targets.

    python -m quat_ik_addon.solver solve RIG.json --chain arm --targets targets.json -o out.json

Targets are a JSON list of [x, y, z], a JSON object {"positions": [...], "orientations":
[[w, x, y, z], ...] or "directions": [...]}, or an .npy array shaped (N, 3), all in the chain's
root frame (armature space, or the rest frame of the root bone's parent). The output JSON holds
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
import sys
from pathlib import Path

import numpy as np

from .chain import Chain
from .goals import Goals
from .native import library
from .rig_spec import RigSpecError, load_rig_spec
from .sequence import solve_sequence
from .settings import KERNELS, METHODS, SolveSettings
from .solve import solve
from .solver_path import describe as describe_solver_path

NUMPY_CHOSEN = "numpy (--kernel numpy)"  # the solver path line when the command line asks for numpy


class InputError(Exception):
    """Bad input on the command line: reported in one line, exit status 2."""


def _read_goals(path: Path) -> Goals:
    try:
        if path.suffix == ".npy":
            return Goals(np.load(path))
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: cannot read targets: {error}") from None
    try:
        if isinstance(data, dict):
            unknown = set(data) - {"positions", "orientations", "directions"}
            if unknown:
                raise InputError(f"{path}: unknown keys {sorted(unknown)}")
            return Goals(
                np.asarray(data["positions"], dtype=float),
                None if "orientations" not in data else np.asarray(data["orientations"], dtype=float),
                None if "directions" not in data else np.asarray(data["directions"], dtype=float),
            )
        return Goals(np.asarray(data, dtype=float))
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
    run.add_argument("--method", choices=METHODS, default=SolveSettings.method)
    run.add_argument(
        "--restarts", type=int, default=4, help="restart rounds for stuck targets (default 4, as the panel)"
    )
    run.add_argument("--max-iterations", type=int, default=SolveSettings.max_iterations)
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
        help="position tolerance (default: 1e-6 x chain reach); a rotation counts within tolerance / reach radians",
    )
    run.add_argument("--sequence", action="store_true", help="targets are frames: keep continuity between them")
    run.add_argument(
        "--kernel",
        choices=KERNELS,
        default=SolveSettings.kernel,
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
    goals = _read_goals(args.targets)
    try:
        settings = SolveSettings(
            method=args.method,
            restarts=args.restarts,
            max_iterations=args.max_iterations,
            tolerance=args.tolerance,
            time_limit=args.time_limit,
            kernel=args.kernel,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    numpy_only = args.kernel == "numpy"
    # The settings keep the solve's methods on numpy; numpy_only() also its limit clamping.
    with library.numpy_only() if numpy_only else contextlib.nullcontext():
        result = (
            solve_sequence(chain, goals, settings=settings) if args.sequence else solve(chain, goals, settings=settings)
        )
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
