"""Session: a chain's pole target decides which way it bends, in Solve Now, Live and Bake,
without costing the goal; the pole angle turns the bend; a deleted pole is simply gone; Add
Pole puts a new one where the chain bends and keeps the pose.

argv: WORKDIR
"""

import math
import types

import bpy

# isort: split
from tests.blender.sessions.common import (
    Checks,
    add_chain,
    bone_world_matrices,
    effector_world,
    empty,
    matrix_distance,
    straight_rig,
    submodule,
    world_of,
)

checks = Checks("pole targets")
with checks.step("chain added"):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    rig = straight_rig("Arm", 3, length=1.0)  # bones along +Z from the origin
    target = empty("Target", (0.0, 0.0, 2.2))  # straight above: the chain must bend, any way
    pole = empty("Pole", (3.0, 0.0, 1.0))
    checks.check("chain added", add_chain(rig, "B2", 3, "Target", mode="MANUAL") == {"FINISHED"})
    chain = rig.quat_ik.chains[0]
    chain.tolerance = 1e-4


def bend_x() -> float:
    """Mean x of the two inner joints: which side of the root-target line the chain bends to."""
    bpy.context.view_layer.update()
    return (world_of(rig, "B1").x + world_of(rig, "B2").x) / 2.0


def solve() -> None:
    checks.check("solve finished", bpy.ops.quat_ik.solve() == {"FINISHED"})


def reached() -> float:
    return (effector_world(rig, "B2") - target.matrix_world.translation).length


with checks.step("bends toward the pole on either side and reaches"):
    for side in (1.0, -1.0):
        pole.location = (3.0 * side, 0.0, 1.0)
        chain.pole_object = pole
        solve()
        checks.check(f"bends toward the pole at x = {3 * side:+.0f}", bend_x() * side > 0.3, f"mean x {bend_x():.3f}")
        checks.check(f"reaches the target with the pole at x = {3 * side:+.0f}", reached() < 1e-3, f"{reached():.2e}")

with checks.step("a pole on +Y and a pole angle of 180 degrees"):
    pole.location = (0.0, 3.0, 1.0)
    solve()
    checks.check("bends toward a pole on +Y", (world_of(rig, "B1").y + world_of(rig, "B2").y) / 2 > 0.3)
    chain.pole_angle = math.radians(180.0)
    solve()
    checks.check("pole angle 180° bends away from the pole", (world_of(rig, "B1").y + world_of(rig, "B2").y) / 2 < -0.3)
    chain.pole_angle = 0.0

# Live: moving the pole alone re-solves the chain.
with checks.step("live: moving the pole re-bends the chain"):
    chain.mode = "LIVE"
    pole.location = (-3.0, 0.0, 1.0)
    bpy.context.view_layer.update()
    checks.check("live: moving the pole re-bends the chain", bend_x() < -0.3, f"mean x {bend_x():.3f}")
    chain.mode = "MANUAL"

# Bake: the pole keys follow the pole, every frame reaching.
with checks.step("a bake follows an animated pole"):
    for frame, x in ((1, 3.0), (20, -3.0)):
        pole.location = (x, 0.0, 1.0)
        pole.keyframe_insert("location", frame=frame)
    result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=20, destination="NEW_ACTION")
    checks.check("bake finished", result == {"FINISHED"})
    scene.frame_set(1)
    checks.check("baked frame 1 bends to +X", bend_x() > 0.3, f"{bend_x():.3f}")
    checks.check("baked frame 1 reaches", reached() < 1e-3, f"{reached():.2e}")
    scene.frame_set(20)
    checks.check("baked frame 20 bends to -X", bend_x() < -0.3, f"{bend_x():.3f}")
    checks.check("baked frame 20 reaches", reached() < 1e-3, f"{reached():.2e}")

# An animated Pole Angle, 0 at frame 1 and 180° at frame 20: the bake turns the bend away.
with checks.step("an animated pole angle is sampled and baked"):
    rig.animation_data_clear()
    pole.animation_data_clear()
    pole.location = (3.0, 0.0, 1.0)
    chain.pole_angle = 0.0
    chain.keyframe_insert("pole_angle", frame=1)
    chain.pole_angle = math.radians(180.0)
    chain.keyframe_insert("pole_angle", frame=20)
    scene.frame_set(1)
    bake = submodule("bake.bake")
    gathered = {}
    for sample in (True, False):
        job = bake.Bake(scene, rig, [chain], bake.BakeSettings(1, 20, sample_inputs=sample))
        job.gather_all(bpy.context.evaluated_depsgraph_get)
        gathered[job.gather_path] = job.solve()[0].outcome.rotations
    checks.check(
        "an animated pole angle is sampled from its F-curve", set(gathered) == {"sampled", "frame_set"}, set(gathered)
    )
    if len(gathered) == 2:
        difference = abs(gathered["sampled"] - gathered["frame_set"]).max()
        checks.check("... as reading frame by frame does", difference < 1e-6, difference)
    checks.check("bake with an animated pole angle", bpy.ops.quat_ik.bake(frame_start=1, frame_end=20) == {"FINISHED"})
    scene.frame_set(1)
    checks.check("pole angle 0 at frame 1: bends toward the pole", bend_x() > 0.3, f"{bend_x():.3f}")
    scene.frame_set(20)
    checks.check("pole angle 180° at frame 20: bends away", bend_x() < -0.3, f"{bend_x():.3f}")
    checks.check("... still reaching", reached() < 1e-3, f"{reached():.2e}")
    rig.animation_data_clear()  # the pole angle's keys with the bones'
    chain.pole_angle = 0.0


# The Pole and Orientation sub-panels (closed by default, so no window test opens them) draw
# their fields: drawn here onto a layout that records what it is asked to show.
class RecordingLayout:
    def __init__(self, shown):
        self.shown, self.use_property_split, self.use_property_decorate, self.active = shown, False, True, True

    def prop(self, data, name, **_):
        self.shown.append(name)

    def prop_search(self, data, name, *_args, **_kwargs):
        self.shown.append(name)

    def row(self, **_):
        return self

    def column(self, **_):
        return self

    def operator(self, idname, **_):
        self.shown.append(idname)


def drawn_fields(panel_class) -> list:
    shown: list = []
    stand_in = types.SimpleNamespace(layout=RecordingLayout(shown))  # Blender makes the real panel
    stand_in.split_layout = lambda: panels._ChainSubPanel.split_layout(stand_in)
    panel_class.draw(stand_in, bpy.context)
    return shown


with checks.step("pole and orientation panels draw their fields"):
    panels = submodule("ui.panels")
    bpy.context.view_layer.objects.active = rig
    checks.check(
        "Pole panel shows the pole, its bone field only for armatures, and the angle",
        drawn_fields(panels.QUATIK_PT_chain_pole) == ["pole_object", "pole_facing", "pole_angle"],
        drawn_fields(panels.QUATIK_PT_chain_pole),
    )
    chain.pole_object = rig
    checks.check(
        "Pole panel shows a bone field for an armature pole",
        drawn_fields(panels.QUATIK_PT_chain_pole) == ["pole_object", "pole_bone", "pole_facing", "pole_angle"],
    )
    chain.pole_object = pole
    chain.orientation_mode = "OBJECT"
    checks.check(
        "Orientation panel draws with the shared object/bone helper",
        drawn_fields(panels.QUATIK_PT_chain_orientation)[:2] == ["orientation_mode", "orientation_object"],
    )
    chain.orientation_mode = "NONE"

# A deleted pole: Blender clears the pointer, and the chain solves without a pole.
with checks.step("a deleted pole is cleared and the chain still reaches"):
    scene.frame_set(1)
    rig.animation_data_clear()
    bpy.data.objects.remove(pole)
    checks.check("deleted pole: the chain's pole is cleared", chain.pole_object is None)
    solve()
    checks.check("deleted pole: still reaches", reached() < 1e-3, f"{reached():.2e}")

# Add Pole: an empty on the side the chain bends toward now becomes its pole; the pose stays.
with checks.step("pole panel offers add pole"):
    checks.check(
        "Pole panel offers Add Pole while the chain has none",
        drawn_fields(panels.QUATIK_PT_chain_pole) == ["pole_object", "quat_ik.add_pole", "pole_facing", "pole_angle"],
        drawn_fields(panels.QUATIK_PT_chain_pole),
    )
with checks.step("add pole places it by the bend and keeps the pose"):
    bpy.context.view_layer.update()
    before = bone_world_matrices(rig)
    heads = [world_of(rig, name) for name in ("B0", "B1", "B2")]
    tip = effector_world(rig, "B2")
    chain.pole_facing = "ROOT_X"  # left from before: Add Pole places by the bend and faces it so
    checks.check("add pole finished", bpy.ops.quat_ik.add_pole(distance=0.5) == {"FINISHED"})
    checks.check("... facing the chain's bend, as it was placed", chain.pole_facing == "BEND")
    added = chain.pole_object
    checks.check("... an empty named after the chain is its pole", added is not None and added.name == "B2_pole", added)
    middle = (heads[0] + tip) / 2.0
    axis = (tip - heads[0]).normalized()
    bend = (heads[1] + heads[2]) / 2.0 - heads[0]
    bend = (bend - axis * bend.dot(axis)).normalized()
    offset = added.location - middle
    checks.near("... half the chain's length from its middle", offset.length, 1.5, 1e-4)
    checks.near("... on the side the chain bends toward", offset.normalized().dot(bend), 1.0, 1e-6)
    solve()
    moved = max(matrix_distance(before[name], matrix) for name, matrix in bone_world_matrices(rig).items())
    checks.check("... and solving with it keeps the pose", moved < 1e-4, moved)
with checks.step("the added pole bends the chain when moved"):
    checks.check("a chain with a pole cannot get another", not bpy.ops.quat_ik.add_pole.poll())
    added.location = middle - offset  # the other side of the root-target line
    solve()
    checks.check("the new pole bends the chain when moved", bend_x() * bend.x < 0.0, f"{bend_x():.3f}")
    checks.check("... still reaching", reached() < 1e-3, f"{reached():.2e}")

# A straight chain: the pole goes where its limits let it bend, a hinge knee's range.
with checks.step("add pole to a straight leg with a hinge knee"):
    leg = straight_rig("Leg", 3)
    leg.location = (5.0, 0.0, 0.0)
    knee = leg.pose.bones["B1"].quat_ik
    knee.joint_type, knee.hinge_axis, knee.use_hinge_range = "HINGE", "X", True
    knee.hinge_min, knee.hinge_max = 0.0, math.radians(120.0)
    foot_target = empty("FootTarget", (5.0, 0.0, 2.2))
    checks.check("a straight leg's chain added", add_chain(leg, "B2", 3, "FootTarget", mode="MANUAL") == {"FINISHED"})
    checks.check("add pole to the straight leg", bpy.ops.quat_ik.add_pole() == {"FINISHED"})
    leg_chain = leg.quat_ik.chains[0]
    leg_pole = leg_chain.pole_object
    checks.check(
        "... beside the leg, off its line",
        leg_pole is not None and abs(leg_pole.location.x - 5.0) + abs(leg_pole.location.y) > 1.0,
    )
    checks.check("solve the leg with it", bpy.ops.quat_ik.solve() == {"FINISHED"})
    bpy.context.view_layer.update()
    hip_turn = leg.pose.bones["B0"].rotation_quaternion.angle
    knee_angle = leg.pose.bones["B1"].rotation_quaternion.angle
    leg_reach = (effector_world(leg, "B2") - foot_target.matrix_world.translation).length
    checks.check("... it reaches", leg_reach < 1e-3, f"{leg_reach:.2e}")
    checks.check("... the knee bends inside its range", 0.1 < knee_angle <= math.radians(120.0) + 1e-4, knee_angle)
    checks.check("... and the hip has no half turn to make to face the pole", hip_turn < math.radians(90.0), hip_turn)

# Add Chain can add the pole too; where there is no side to put it, the chain still comes, with
# a warning.
with checks.step("add chain with a pole"):
    leg_chain.pole_object = None
    bpy.data.objects.remove(leg_pole)
    checks.check(
        "add chain with a pole",
        add_chain(leg, "B2", 3, "FootTarget", mode="MANUAL", add_pole=True) == {"FINISHED"},
    )
    second = leg.quat_ik.chains[-1]
    checks.check("... the new chain has its pole", second.pole_object is not None, second.pole_object)
    knee.joint_type = "FREE"  # straight, and now nothing says which way the knee bends
    for bone in leg.pose.bones:
        bone.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    checks.check(
        "add chain with a pole on a straight free chain",
        add_chain(leg, "B2", 3, "FootTarget", mode="MANUAL", add_pole=True) == {"FINISHED"},
    )
    checks.check("... comes without one", leg.quat_ik.chains[-1].pole_object is None)
checks.close()
