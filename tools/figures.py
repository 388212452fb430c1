"""Pictures made by the project's own code (matplotlib, never edited by hand).

* ``rig_figure``: the demo's PNG per rig: target path against both solvers' effector paths,
  tip error over time, and every joint's swing and twist over time against its limits.
* ``reach_window_figure``: the README's picture of a reach window, drawn from the solver's own
  window geometry (``quat_ik_addon.solver.limits.reach_windows``).

    .venv/bin/python tools/figures.py          # README figures into docs/images/

The demo (tools/demo.py) calls ``rig_figure``; numpy and matplotlib only, no bpy.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # files only, never a window
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from quat_ik_addon.solver import quaternion as quat  # noqa: E402
from tools.demo_metrics import joint_series  # noqa: E402

IMAGES_DIR = REPO_ROOT / "docs" / "images"
OURS, BLENDER, TARGET, LIMIT = "tab:blue", "tab:orange", "0.35", "tab:red"
# The target path is a wide pale band under the tips' thin lines: where a tip reaches, its line
# runs inside the band, and the band still shows on both sides of it.
TARGET_BAND = {"color": "0.55", "lw": 7.0, "alpha": 0.35, "solid_capstyle": "round"}
# Heat maps: the share of each limit used, 0 (the limit's middle) to 1 (at its edge) on a
# sequential scale; beyond 1 + this (more than 1% of the range past the edge) in red.
OUTSIDE_SHARE = 0.01
OUTSIDE_COLOR = "tab:red"
UNUSED_DEG = 1e-3  # a heat map whose largest angle is below this: no bone moved that way
SOLVER_LABELS = {"quat_ik": "Quat IK", "blender_ik": "Blender IK"}
SOLVER_COLORS = {"quat_ik": OURS, "blender_ik": BLENDER}
MAX_JOINT_PANELS = 12  # more joints than this: heat maps instead of one panel pair per joint
DEMO_DPI = 80


# --------------------------------------------------------------------------- demo figure


def rig_figure(run, stats: dict, path: Path) -> Path:
    """One rig's PNG (``run``: tools.demo_bake.RigRun, ``stats``: solver -> SolverStats)."""
    fig = rig_plot(run, stats)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DEMO_DPI)
    plt.close(fig)
    return path


def rig_plot(run, stats: dict):
    """The matplotlib figure ``rig_figure`` saves (for tests to inspect)."""
    joints = {s: [] for s in run.runs}
    for solver, runs in run.runs.items():
        for info, chain_run in zip(run.chains, runs, strict=True):
            joints[solver] += [(info.name, j) for j in joint_series(info.bone_names, info.chain, chain_run.rotations)]
    count = len(joints["quat_ik"])
    heat = count > MAX_JOINT_PANELS
    joint_rows = 2 if heat else (count + 1) // 2
    fig = plt.figure(figsize=(15, 4.6 + 2.1 * joint_rows), layout="constrained")
    grid = fig.add_gridspec(1 + joint_rows, 4, height_ratios=[2.3] + [1.0] * joint_rows)
    _title(fig, run, stats)
    _paths_panel(fig.add_subplot(grid[0, :2], projection="3d"), run)
    _error_panel(fig.add_subplot(grid[0, 2:]), run)
    if heat:
        _heat_maps(fig, grid, run, joints)
    else:
        for k, ((chain_name, ours), (_, theirs)) in enumerate(
            zip(joints["quat_ik"], joints["blender_ik"], strict=True)
        ):
            row, col = 1 + k // 2, 2 * (k % 2)
            label = ours.bone if len(run.chains) == 1 else f"{chain_name}: {ours.bone}"
            if ours.kind == "ball":
                axes = (fig.add_subplot(grid[row, col]), fig.add_subplot(grid[row, col + 1]))
            else:
                axes = (fig.add_subplot(grid[row, col : col + 2]),)
            _joint_panels(axes, run.frames, label, ours, theirs)
        handles = _legend_handles([series for _, series in joints["quat_ik"]])
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=9, frameon=False)
    return fig


def _title(fig, run, stats) -> None:
    parts = []
    for solver, s in stats.items():
        parts.append(
            f"{SOLVER_LABELS[solver]}: bake {s.bake_seconds:.2f} s, reached {s.reached}/{s.frames} frames, "
            f"worst limit violation {s.violation_max_deg:.2g}°, largest joint jump {s.jump_max_deg:.1f}°"
        )
    fig.suptitle(f"{run.name}\n" + "\n".join(parts), fontsize=11)


def _paths_panel(ax, run) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.computed_zorder = False  # drawn in the order below: the band under the tips, ours on top
    for c in range(len(run.chains)):
        target = run.runs["quat_ik"][c].target
        ax.plot(*target.T, zorder=1, label="target (grey band)" if c == 0 else None, **TARGET_BAND)
        for zorder, solver in enumerate(("blender_ik", "quat_ik"), start=2):
            effector = run.runs[solver][c].effector
            ax.plot(
                *effector.T,
                color=SOLVER_COLORS[solver],
                lw=1.2,
                zorder=zorder,
                label=f"{SOLVER_LABELS[solver]} tip" if c == 0 else None,
            )
    everything = np.concatenate(
        [r.effector for runs in run.runs.values() for r in runs] + [r.target for r in run.runs["quat_ik"]]
    )
    low, high = everything.min(axis=0), everything.max(axis=0)
    centre, half = 0.5 * (low + high), 0.5 * float(np.max(high - low)) + 1e-3
    ax.set(xlim=(centre[0] - half, centre[0] + half), ylim=(centre[1] - half, centre[1] + half))
    ax.set(zlim=(centre[2] - half, centre[2] + half), xlabel="x", ylabel="y", zlabel="z")
    # Few ticks, none near the box's corners, where one axis's labels run into the next one's.
    for axis, middle in zip((ax.xaxis, ax.yaxis, ax.zaxis), centre, strict=True):
        low_tick, high_tick = middle - 0.65 * half, middle + 0.65 * half
        ticks = MaxNLocator(3).tick_values(low_tick, high_tick)
        axis.set_ticks(ticks[(ticks >= low_tick) & (ticks <= high_tick)])
    ax.tick_params(labelsize=8, pad=1)
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elev=18, azim=-60)
    ax.set_title("Target path and tip paths (world space)", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(-0.1, 1.0), fontsize=8, frameon=False)


def _error_panel(ax, run) -> None:
    floor = 1e-4  # mm: anything closer plots on the floor of the log scale
    for solver in ("blender_ik", "quat_ik"):
        errors = np.stack([np.linalg.norm(r.effector - r.target, axis=1) for r in run.runs[solver]], axis=1)
        ax.semilogy(run.frames, np.maximum(1e3 * errors.max(axis=1), floor), color=SOLVER_COLORS[solver], lw=1.2,
                    label=f"{SOLVER_LABELS[solver]} tip to target")  # fmt: skip
    ax.axhline(1.0, color=LIMIT, lw=0.8, ls=":", label="1 mm (counted as reached)")
    handles, labels = ax.get_legend_handles_labels()
    orientation = [r.orientation_error is not None for r in run.runs["quat_ik"]]
    if any(orientation):
        twin = ax.twinx()
        for solver in ("blender_ik", "quat_ik"):
            angles = np.stack(
                [r.orientation_error for r in run.runs[solver] if r.orientation_error is not None], axis=1
            )
            twin.plot(run.frames, np.degrees(angles.max(axis=1)), color=SOLVER_COLORS[solver], lw=0.8, ls="--",
                      label=f"{SOLVER_LABELS[solver]} orientation error (°, right axis)")  # fmt: skip
        twin.set_ylabel("orientation error (°)")
        twin.set_ylim(bottom=0.0)
        more_handles, more_labels = twin.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
    ax.set(xlabel="frame", ylabel="distance (mm, log)", xlim=(run.frames[0], run.frames[-1]))
    title = "Tip error per frame" + (" (worst chain)" if len(run.chains) > 1 else "")
    ax.set_title(title, fontsize=10)
    # Under the plot, never over a curve.
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=min(3, len(handles)),
              fontsize=8, frameon=False)  # fmt: skip
    ax.grid(True, which="major", alpha=0.3)


def _band(ax, limits) -> None:
    if limits is None:
        return
    low, high = limits
    ax.axhspan(low, high, color="0.9", zorder=0)
    for value in limits:
        ax.axhline(value, color=LIMIT, lw=0.8)


def _legend_handles(series) -> list:
    """The joint panels' legend: only what they draw (window edges only where a ball joint has
    a window, ranges only where a joint has one)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Line2D([], [], color=OURS, lw=1.4, label="Quat IK"),
        Line2D([], [], color=BLENDER, lw=1.0, label="Blender IK"),
    ]
    if any(s.kind == "ball" and s.swing_limit is not None for s in series):
        handles += [
            Line2D([], [], color=LIMIT, lw=0.9, ls="--", label="window edge in Quat IK's direction"),
            Line2D([], [], color=BLENDER, lw=0.8, ls="--", label="window edge in Blender IK's direction"),
        ]
    ranged = [s.angle_range if s.kind == "hinge" else s.twist_range for s in series if s.kind in ("hinge", "ball")]
    if any(r is not None for r in ranged):
        handles += [Patch(color="0.9", label="allowed range"), Line2D([], [], color=LIMIT, lw=0.8, label="range ends")]
    return handles


def _joint_panels(axes, frames, label, ours, theirs) -> None:
    """A ball joint gets (swing, twist) panels, a hinge one panel for its angle."""
    for ax in axes:
        ax.tick_params(labelsize=8)
        ax.set_xlim(frames[0], frames[-1])
        ax.grid(True, alpha=0.3)
    if ours.kind == "hinge":
        _band(axes[0], ours.angle_range)
        axes[0].plot(frames, theirs.angle, color=BLENDER, lw=1.0)
        axes[0].plot(frames, ours.angle, color=OURS, lw=1.4)
        axes[0].set_title(f"{label}: hinge angle (°)", fontsize=9)
        return
    if ours.kind != "ball":
        axes[0].set_title(f"{label}: no limit to show", fontsize=9)
        return
    swing_ax, twist_ax = axes
    if ours.swing_limit is not None:
        swing_ax.plot(frames, theirs.swing_limit, color=BLENDER, lw=0.8, ls="--")
        swing_ax.plot(frames, ours.swing_limit, color=LIMIT, lw=0.9, ls="--")
    swing_ax.plot(frames, theirs.swing, color=BLENDER, lw=1.0)
    swing_ax.plot(frames, ours.swing, color=OURS, lw=1.4)
    swing_ax.set_ylim(bottom=0.0)
    swing_ax.set_title(f"{label}: swing from window centre (°)", fontsize=9)
    _band(twist_ax, ours.twist_range)
    twist_ax.plot(frames, theirs.twist, color=BLENDER, lw=1.0)
    twist_ax.plot(frames, ours.twist, color=OURS, lw=1.4)
    twist_ax.set_title(f"{label}: twist (°)", fontsize=9)


def _usage(series) -> tuple[np.ndarray, np.ndarray]:
    """(bones, F) share of the limit used: swing / window edge, |twist| / the range's end."""
    swing, twist = [], []
    for s in series:
        swing.append(s.swing / np.maximum(s.swing_limit, 1e-9) if s.swing_limit is not None else 0 * s.swing)
        if s.twist_range is None:
            twist.append(0 * s.twist)
        else:
            low, high = s.twist_range
            twist.append(np.where(s.twist >= 0.0, s.twist / max(high, 1e-9), s.twist / min(low, -1e-9)))
    return np.array(swing), np.array(twist)


def _heat_maps(fig, grid, run, joints) -> None:
    from matplotlib.colors import Normalize

    extent = (run.frames[0], run.frames[-1], len(joints["quat_ik"]) - 0.5, -0.5)
    colors = plt.get_cmap("viridis").with_extremes(over=OUTSIDE_COLOR)
    scale = Normalize(vmin=0.0, vmax=1.0 + OUTSIDE_SHARE)
    for col, solver in ((0, "quat_ik"), (2, "blender_ik")):
        balls = [j for _, j in joints[solver] if j.kind == "ball"]
        swing, twist = _usage(balls)
        largest = {
            "swing": max((float(np.max(np.abs(b.swing))) for b in balls), default=0.0),
            "twist": max((float(np.max(np.abs(b.twist))) for b in balls), default=0.0),
        }
        for row, (values, what, angle) in enumerate(
            ((swing, "swing / window edge", "swing"), (twist, "twist / twist limit", "twist"))
        ):
            ax = fig.add_subplot(grid[1 + row, col : col + 2])
            image = ax.imshow(values, aspect="auto", cmap=colors, norm=scale, extent=extent, interpolation="nearest")
            ax.set_title(f"{SOLVER_LABELS[solver]}: {what} (1: at the limit; red: outside)", fontsize=9)
            ax.set(xlabel="frame", ylabel="bone (root at top)")
            bar = fig.colorbar(image, ax=ax, fraction=0.03, extend="max")
            bar.set_ticks([0.0, 0.5, 1.0])
            if largest[angle] < UNUSED_DEG:  # one flat colour would read as data: say what it means
                ax.text(0.5, 0.5, f"{SOLVER_LABELS[solver]} turned no bone's {angle} on any frame\n"
                        f"(largest {largest[angle]:.1g}°)", transform=ax.transAxes, ha="center", va="center",
                        color="white", fontsize=10)  # fmt: skip


# --------------------------------------------------------------------------- README figure


def reach_window_figure(path: Path) -> Path:
    """A polygonal reach window on the sphere of bone directions and on its gnomonic plane,
    with directions inside, outside, and where Blow's "closest" clamp sends the outside ones.
    Everything is computed by the solver's own ``PolygonWindow``."""
    from quat_ik_addon.solver.limits.window_shapes import window_rim
    from quat_ik_addon.solver.rig import spec as spec
    from quat_ik_addon.solver.rig.spec_chain import solver_window

    window = solver_window(spec.PolygonWindow(vertices_deg=((-40, -30), (45, -35), (50, 30), (-5, 50), (-45, 15))))
    c, u, v = window.center, window.plane_x, window.plane_y
    rim = window_rim(window, 400)
    rng = np.random.default_rng(3)
    probes = rng.normal(size=(200, 3)) * (0.7, 0.35, 0.7) + (0.0, 0.8, 0.0)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    probes = probes[probes @ c > 0.3][:70]
    inside = window.contains(probes, 0.0)
    clamped = window.closest(probes)

    fig = plt.figure(figsize=(13, 6.0), layout="constrained")
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    lon, lat = np.meshgrid(np.linspace(0, 2 * np.pi, 37), np.linspace(0, 0.5 * np.pi, 10))
    ax.plot_wireframe(np.cos(lon) * np.sin(lat), np.cos(lat), np.sin(lon) * np.sin(lat), color="0.85", lw=0.4)
    corners_plane = c + window.vertices[:, :1] * u + window.vertices[:, 1:] * v
    ax.plot(*np.vstack((corners_plane, corners_plane[:1])).T, color="tab:green", lw=2,
            label="the window: a loop on the plane at distance 1")  # fmt: skip
    ax.plot(*np.vstack((rim, rim[:1])).T, color="tab:green", lw=1.2, ls="--", label="its cone met on the unit sphere")
    for corner in corners_plane:
        ax.plot(*np.stack((np.zeros(3), corner)).T, color="tab:green", lw=0.6, alpha=0.5)
    ax.quiver(0, 0, 0, 0, 1, 0, color="k", lw=2, arrow_length_ratio=0.1)
    ax.text(0.05, 0.55, -0.25, "rest: the bone along +y", fontsize=9)
    ax.scatter(*probes[inside].T, color=OURS, s=10, depthshade=False, label="bone directions inside: kept")
    ax.scatter(*probes[~inside].T, color=LIMIT, s=10, depthshade=False, label="outside: moved to the nearest inside")
    for p, q in zip(probes[~inside], clamped[~inside], strict=True):
        ax.plot(*np.stack((p, q)).T, color=LIMIT, lw=0.8)
    ax.set(xlim=(-1.2, 1.2), ylim=(0, 1.4), zlim=(-1.2, 1.2), xlabel="local x", ylabel="local y", zlabel="local z")
    ax.set_box_aspect((2.4, 1.4, 2.4))
    ax.view_init(elev=12, azim=-118)
    ax.set_yticks([0.0, 0.5, 1.0])
    ax.set_title("In the bone's rest frame: the bone must point through the loop", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)

    ax = fig.add_subplot(1, 2, 2)

    def plane(d):  # gnomonic projection onto the window plane
        return np.stack((d @ u / (d @ c), d @ v / (d @ c)), axis=-1)

    poly = np.vstack((window.vertices, window.vertices[:1]))
    ax.fill(*poly.T, color="tab:green", alpha=0.12)
    ax.plot(*poly.T, color="tab:green", lw=2, label="window: a convex polygon")
    r = window.reference
    side = quat.any_perpendicular(r)
    other = np.cross(r, side)
    angle = np.arccos(window.accept_cos)
    phi = np.linspace(0, 2 * np.pi, 200)[:, None]
    cone = np.cos(angle) * r + np.sin(angle) * (np.cos(phi) * side + np.sin(phi) * other)
    ax.plot(*plane(cone).T, color="0.35", lw=1, ls=":", label="inscribed cone: Blow's one-dot-product early accept")
    front = probes @ c > 0.3
    p_out, q_out = plane(probes[~inside & front]), plane(clamped[~inside & front])
    ax.scatter(*plane(probes[inside & front]).T, color=OURS, s=14, label="inside: kept")
    ax.scatter(*p_out.T, color=LIMIT, s=14, label="outside: to the nearest allowed direction")
    for p, q in zip(p_out, q_out, strict=True):
        ax.annotate("", q, p, arrowprops={"arrowstyle": "->", "color": LIMIT, "lw": 0.8})
    ax.set_aspect("equal")
    ax.set(xlabel="tan(swing toward local x)", ylabel="tan(swing toward local z)")
    ax.set_title("The same on the window's plane (gnomonic: great circles are straight)", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.suptitle("A reach window (Blow 2002) as quat-ik's solver computes it", fontsize=12)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> int:
    path = reach_window_figure(IMAGES_DIR / "reach_window.png")
    print(f"figures: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
