"""Headless command line: ``python -m quat_ik_addon bake FILE.blend [options]``.

Needs only the ``bpy`` module (``pip install bpy``), no Blender install or GUI. It registers
the add-on in this process if no installed copy is enabled, opens the file, runs the same
``quat_ik.bake`` operator the UI runs, and saves the result (to ``-o``, or over the input
with ``--in-place``). Exit status: 0 on success, 1 when the file cannot be opened or the bake
reports an error, 2 for bad arguments (a file that is not a .blend among them), each said in one
line. ``--version`` prints the add-on's version and the solver path (native kernel or
numpy) without starting Blender; ``bake --kernel numpy`` bakes on the numpy solver. See
docs/headless.md.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys

MAX_FRAME = 1_048_574  # blender.compat.MAX_FRAME, not imported: bpy loads after the arguments pass
FRAMES = re.compile(r"\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?")
# How a .blend file starts: plain, gzip-compressed (Blender before 3.0) or zstd-compressed.
BLEND_MAGIC = (b"BLENDER", b"\x1f\x8b", b"\x28\xb5\x2f\xfd")


def _looks_like_blend(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(7)
    except OSError:
        return False
    return head.startswith(BLEND_MAGIC)


def _parse_frames(text: str) -> tuple[int, int]:
    """START-END or one frame; either may be negative (``--frames=-10--1``)."""
    match = FRAMES.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"frames must look like 1-250 (or -10--1), not {text!r}")
    start, end = int(match[1]), int(match[2] or match[1])
    if not -MAX_FRAME <= start <= MAX_FRAME or not -MAX_FRAME <= end <= MAX_FRAME:
        raise argparse.ArgumentTypeError(f"frames run from -{MAX_FRAME} to {MAX_FRAME} in Blender, not {text!r}")
    return start, end


def _whole_frames(minimum: int):
    """An argparse type: a whole number of frames, ``minimum`` or more."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be a whole number of frames, {minimum} or more, not {text!r}")
        return value

    return parse


def _tolerance(text: str) -> float:
    try:
        tolerance = float(text)
    except ValueError:
        tolerance = math.nan
    if not (math.isfinite(tolerance) and tolerance >= 0.0):
        raise argparse.ArgumentTypeError(f"must be a number, 0 or more, not {text!r}")
    return tolerance


def _arguments(argv: list[str]) -> argparse.Namespace:
    from .solver.cli import VersionAction  # the solver imports numpy, never bpy: --version needs no Blender
    from .solver.settings import KERNELS

    parser = argparse.ArgumentParser(prog="python -m quat_ik_addon", description="Quat IK without Blender's UI.")
    parser.add_argument("--version", action=VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)
    bake = commands.add_parser("bake", help="bake Quat IK chains of a .blend file into keyframes")
    bake.add_argument("blend", help="the .blend file to open")
    bake.add_argument("--armature", default="", help="armature object (default: the file's active object)")
    bake.add_argument("--chain", default="", help="bake only this chain (name or tip bone); default: all enabled")
    bake.add_argument(
        "--frames",
        type=_parse_frames,
        metavar="START-END|FRAME",
        help="frame range START-END, or one FRAME alone (bakes that frame only); default: the scene's range; "
        "with a negative start write --frames=-10-20",
    )
    bake.add_argument("--step", type=_whole_frames(1), default=1, help="key every STEP frames and the last (default 1)")
    bake.add_argument(
        "--into",
        choices=("active", "new", "nla"),
        default="active",
        help="the active action (default), a new action, or a new NLA strip",
    )
    bake.add_argument(
        "--simplify", type=_tolerance, metavar="TOLERANCE", help="drop keys within TOLERANCE of a straight line"
    )
    bake.add_argument(
        "--time-limit",
        type=_tolerance,
        metavar="SECONDS",
        help="seconds each chain's shot may spend improving its frames (searches for misses and other branches) "
        "before it keeps what it has; Last Solve says when it ran out (0 or absent: no limit)",
    )
    bake.add_argument(
        "--ease-jumps",
        type=_whole_frames(0),
        default=0,
        metavar="FRAMES",
        help="spread each pose jump between solution branches over FRAMES frames, missing the target on the way where no smooth crossing reaches it",
    )
    bake.add_argument(
        "--cyclic",
        action="store_true",
        help="the range loops (a walk cycle): the last frame leads into the first, so the keys loop without a pop",
    )
    bake.add_argument("--keep-mode", action="store_true", help="leave the chains' modes as they are after baking")
    bake.add_argument(
        "--kernel",
        choices=KERNELS,
        default="auto",
        help="auto: the native kernel where it loads and the add-on's preference allows (default); "
        "numpy: the numpy solver, same answers, slower",
    )
    out = bake.add_mutually_exclusive_group(required=True)
    out.add_argument("-o", "--output", help="write the baked file here")
    out.add_argument("--in-place", action="store_true", help="overwrite the input file")
    args = parser.parse_args(argv)
    # Checked before Blender starts, so a typo costs no bake.
    if not os.path.isfile(args.blend):
        parser.error(f"no .blend file at {args.blend!r}")
    if not _looks_like_blend(args.blend):
        parser.error(f"{args.blend!r} is not a .blend file")
    if args.output is not None:
        folder = os.path.dirname(os.path.abspath(args.output))
        if os.path.isdir(args.output) or not os.path.isdir(folder):
            parser.error(f"cannot write {args.output!r}: give a file name in an existing folder")
    return args


def _ensure_registered() -> None:
    import bpy

    if "quat_ik" in dir(bpy.ops) and "bake" in dir(bpy.ops.quat_ik):
        return  # an installed copy (extension or legacy add-on) is enabled
    from . import register

    register()


def _solver_library():
    """``solver.native.library`` of the add-on copy that bakes: this checkout, or the installed
    copy (``bl_ext.user_default.quat_ik`` or ``quat_ik``) whose operator is registered."""
    import importlib

    import bpy

    operator = bpy.types.Operator.bl_rna_get_subclass_py("QUAT_IK_OT_bake")
    package = operator.__module__.rpartition(".blender.")[0] if operator is not None else __package__
    return importlib.import_module(f"{package}.solver.native.library")


def main(argv: list[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    import bpy

    _ensure_registered()
    library = _solver_library()
    if args.kernel == "numpy":
        library.set_preference(False)  # as the preference unchecked: every solve of the bake on numpy
        print("quat_ik: solving on numpy (--kernel numpy)")
    else:
        print(f"quat_ik: solving on {library.load()[1].describe()}")
    try:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(args.blend))
    except RuntimeError as error:  # a damaged or unreadable file: Blender's own message, on one line
        reason = " ".join(str(error).replace("Error:", "").split())
        print(f"quat_ik bake: cannot open {args.blend}: {reason}", file=sys.stderr)
        return 1
    options = {
        "armature": args.armature,
        "chain_name": args.chain,
        "step": args.step,
        "destination": {"active": "ACTIVE_ACTION", "new": "NEW_ACTION", "nla": "NLA"}[args.into],
        "set_manual": not args.keep_mode,
        "ease_jumps": args.ease_jumps,
        "cyclic": args.cyclic,
    }
    if args.frames:
        options["frame_start"], options["frame_end"] = args.frames
    if args.simplify is not None:
        options["simplify"], options["simplify_tolerance"] = True, args.simplify
    if args.time_limit is not None:
        options["time_limit"] = args.time_limit
    try:
        bpy.ops.quat_ik.bake(**options)
    except RuntimeError as error:  # the operator's ERROR report
        print(f"quat_ik bake failed: {str(error).strip()}", file=sys.stderr)
        return 1
    output = os.path.abspath(args.blend if args.in_place else args.output)
    try:
        bpy.ops.wm.save_as_mainfile(filepath=output)
    except RuntimeError as error:
        print(f"quat_ik bake could not save {output}: {str(error).strip()}", file=sys.stderr)
        return 1
    print(f"quat_ik: saved {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
