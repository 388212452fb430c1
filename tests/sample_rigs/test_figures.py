"""The demo's plots read at a glance (issue 37): the target path shows where a tip reaches it,
legends stay off the curves and list only what is drawn, 3D tick labels do not run into each
other, and the heat maps tell "at the limit" from "outside" and say when a panel is empty.

The plots are drawn from runs made here with numpy (the sample rigs' own chains, posed by the
solver's forward kinematics), not from a bake: what is checked is the drawing."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.rig.spec import load_rig_spec
from tests.helpers import REPO_ROOT
from tools.demo_bake import ChainInfo, ChainRun, RigRun
from tools.demo_metrics import solver_stats
from tools.figures import OUTSIDE_COLOR, rig_plot

matplotlib.use("Agg")

FRAMES = 40


def sample_run(name: str, seed: int = 0) -> RigRun:
    """Both "solvers" follow the rig's own chain: ours swings every joint a little, Blender's
    stays at rest, so its tip misses the target by the swing's reach."""
    rig = load_rig_spec(REPO_ROOT / "sample_rigs" / f"{name}.rig.json")
    rng = np.random.default_rng(seed)
    chains, runs = [], {"quat_ik": [], "blender_ik": []}
    for spec_chain in rig.chains:
        chain = Chain.from_rig_spec(rig, spec_chain.name)
        chains.append(ChainInfo(spec_chain.name, chain.bone_names, chain, orientation=False))
        phase = np.linspace(0.0, 2.0 * np.pi, FRAMES)[:, None]
        wobble = 0.2 * np.sin(phase + rng.uniform(0.0, 2.0 * np.pi, chain.n_bones))  # radians about x
        ours = np.zeros((FRAMES, chain.n_bones, 4))
        ours[..., 0], ours[..., 1] = np.cos(wobble / 2), np.sin(wobble / 2)
        rest = np.zeros_like(ours)
        rest[..., 0] = 1.0
        target = chain.forward_kinematics(ours).effector
        for solver, rotations in (("quat_ik", ours), ("blender_ik", rest)):
            effector = chain.forward_kinematics(rotations).effector
            runs[solver].append(ChainRun(rotations, effector, target, None))
    frames = np.arange(1, FRAMES + 1)
    run = RigRun(name, frames, chains, {"quat_ik": 0.01, "blender_ik": 0.02}, runs)
    stats = {solver: solver_stats(frames, chains, runs[solver], 0.01) for solver in runs}
    return run, stats


@pytest.fixture(scope="module")
def plots():
    drawn = {name: rig_plot(*sample_run(name)) for name in ("arm3", "robot5", "tentacle30")}
    for fig in drawn.values():
        fig.canvas.draw()  # lays the figure out, as saving it does
    yield drawn
    import matplotlib.pyplot as plt

    for fig in drawn.values():
        plt.close(fig)


def legend_labels(fig) -> list[str]:
    return [text.get_text() for legend in fig.legends for text in legend.get_texts()]


def paths_axes(fig):
    return next(ax for ax in fig.axes if ax.name == "3d")


def error_axes(fig):
    return next(ax for ax in fig.axes if ax.get_title().startswith("Tip error"))


def test_a_rig_of_hinges_lists_no_window_edges(plots) -> None:
    assert not any("window edge" in label for label in legend_labels(plots["robot5"])), legend_labels(plots["robot5"])
    assert any("window edge" in label for label in legend_labels(plots["arm3"])), legend_labels(plots["arm3"])


@pytest.mark.parametrize("name", ["arm3", "robot5", "tentacle30"])
def test_the_error_panels_legend_is_below_its_curves(plots, name: str) -> None:
    fig = plots[name]
    ax = error_axes(fig)
    renderer = fig.canvas.get_renderer()
    legend, plot_area = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
    assert legend.y1 <= plot_area.y0, (legend, plot_area)


@pytest.mark.parametrize("name", ["arm3", "robot5", "tentacle30"])
def test_the_target_band_lies_under_the_tips(plots, name: str) -> None:
    ax = paths_axes(plots[name])
    assert ax.computed_zorder is False  # else mplot3d orders the lines by depth
    by_label = {line.get_label(): line for line in ax.get_lines()}
    band, ours, theirs = by_label["target (grey band)"], by_label["Quat IK tip"], by_label["Blender IK tip"]
    assert band.get_zorder() < theirs.get_zorder() < ours.get_zorder()
    assert band.get_linewidth() >= 4 * ours.get_linewidth() and band.get_alpha() < 1.0


@pytest.mark.parametrize("name", ["arm3", "robot5", "tentacle30"])
def test_3d_ticks_are_few_and_keep_off_the_corners(plots, name: str) -> None:
    """Tick labels at the ends of two axes meet at the box's corner ("0.15-0.30"): the 3D panel
    puts at most four ticks on each axis, none in the outer sixth at either end. (Where
    mplot3d draws a label is not readable back, so the ticks are checked, not the text.)"""
    ax = paths_axes(plots[name])
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        low, high = sorted(axis.get_view_interval())
        ticks = np.asarray(axis.get_ticklocs())
        margin = (high - low) / 6.0
        assert 2 <= len(ticks) <= 4, ticks
        assert np.all((ticks >= low + margin) & (ticks <= high - margin)), (ticks, low, high)


def test_heat_maps_show_outside_in_red_and_say_when_nothing_moved(plots) -> None:
    fig = plots["tentacle30"]
    maps = [ax for ax in fig.axes if ax.images]
    assert len(maps) == 4, [ax.get_title() for ax in maps]
    for ax in maps:
        image = ax.images[0]
        assert np.allclose(image.cmap.get_over(), matplotlib.colors.to_rgba(OUTSIDE_COLOR))
        assert image.norm.vmax > 1.0 and "red: outside" in ax.get_title()
        # The limit itself is not drawn in the colour of outside.
        assert not np.allclose(image.cmap(image.norm(1.0)), matplotlib.colors.to_rgba(OUTSIDE_COLOR))
    blenders = [ax for ax in maps if ax.get_title().startswith("Blender IK")]
    notes = [text.get_text() for ax in blenders for text in ax.texts]
    assert "Blender IK turned no bone's twist on any frame" in "\n".join(notes), notes
