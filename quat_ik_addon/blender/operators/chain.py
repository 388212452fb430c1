"""Operators on chains: add, remove, reorder, solve now.

Heavy modules (numpy, the solver, the rig reader) are imported inside ``execute`` so that
enabling the add-on stays instant. Every problem is checked before anything changes and
reported with ``self.report({'ERROR'}, ...)`` and CANCELLED.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from .. import compat
from ..chains import settings as chain_settings
from ..chains import tip_records
from ..chains.listing import create_chain
from ..runtime.state import session
from ..ui.solver_settings import draw_solver_settings
from .common import armature_or_report, armature_with_chains_poll, chains_editable, new_empty
from .pole import place_pole


class QUATIK_OT_add_chain(bpy.types.Operator):
    """Add a Quat IK chain whose tip is the active pose bone"""

    bl_idname = "quat_ik.add_chain"
    bl_label = "Add Quat IK Chain"
    bl_description = (
        "Add a Quat IK chain ending at the active bone, reaching for a target "
        "(the other selected bone or object, or a new empty)"
    )
    bl_options = {"REGISTER", "UNDO"}

    chain_name: StringProperty(name="Name", description="Name of the chain (empty: named after the tip bone)")
    chain_length: IntProperty(
        name="Chain Length", description="Number of bones in the chain, counted from the tip", default=2, min=1, max=255
    )
    root_bone: StringProperty(
        name="Root Bone", description="Topmost bone of the chain; overrides the chain length when set"
    )
    target: StringProperty(
        name="Target", description="Object the chain reaches for (empty: a new empty at the tip's end)"
    )
    target_bone: StringProperty(name="Target Bone", description="Bone of the target armature to reach for")
    add_pole: BoolProperty(
        name="Add Pole",
        description=(
            "Also add a pole target on the side the chain bends toward now (a straight chain: where its joint "
            "limits let it bend), so its bend keeps facing it"
        ),
    )
    mode: EnumProperty(name="Mode", description="When the chain re-solves", items=chain_settings.MODES, default="LIVE")
    orientation_mode: EnumProperty(
        name="Orientation",
        description="Whether the tip bone also matches a rotation",
        items=chain_settings.ORIENTATION_MODES,
    )
    orientation_target: StringProperty(name="Orientation Target", description="Object whose rotation the tip takes")
    orientation_bone: StringProperty(name="Orientation Bone", description="Bone whose rotation the tip takes")
    iterations: IntProperty(
        name="Iterations", description="Most solver sweeps per solve", default=64, min=1, max=10000, soft_max=500
    )
    tolerance: FloatProperty(
        name="Tolerance",
        description="Distance from the target counted as reached",
        subtype="DISTANCE",
        default=1e-4,
        min=0.0,
        precision=5,
    )
    sweep_order: EnumProperty(
        name="Sweep Order", description="Order joints are turned", items=chain_settings.SWEEP_ORDERS
    )
    clamp_mode: EnumProperty(
        name="Clamp Mode",
        description="How a swing outside the reach windows is brought back",
        items=chain_settings.CLAMP_MODES,
    )
    restarts: IntProperty(
        name="Restarts", description="Rounds of extra solves from other start poses", default=4, min=0, max=64
    )
    time_limit: FloatProperty(
        name="Time Limit",
        description="Seconds a Live, Per Frame or Solve Now solve may spend on restarts (0: no limit)",
        default=0.25,
        min=0.0,
        soft_max=5.0,
        step=10,
        precision=2,
    )
    use_learned_start: BoolProperty(name="Learned Start Poses", description="Start from precomputed poses")
    method: EnumProperty(
        name="Method", description="Solver algorithm", items=chain_settings.METHODS, default="COMBINED"
    )

    @classmethod
    def poll(cls, context):
        ob = context.object
        if ob is None or ob.type != "ARMATURE":
            compat.poll_message(cls, "The active object must be an armature")
            return False
        if ob.data.bones.active is None:
            compat.poll_message(cls, "Select the bone that will be the chain's tip")
            return False
        return True

    def invoke(self, context, event):
        ob = context.object
        if not self.properties.is_property_set("target"):
            # Blender's Shift+I habit: the other selected bone, else the other selected object.
            tip = ob.data.bones.active
            others = [pb for pb in (context.selected_pose_bones or ()) if not (pb.id_data == ob and pb.bone == tip)]
            if others:
                self.target, self.target_bone = others[0].id_data.name, others[0].name
            else:
                objects = [o for o in context.selected_objects if o != ob]
                if objects:
                    self.target = objects[0].name
        return context.window_manager.invoke_props_dialog(self, width=360)

    def draw(self, context):

        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        ob = context.object
        layout.prop(self, "chain_name")
        layout.prop(self, "chain_length")
        layout.prop_search(self, "root_bone", ob.data, "bones")
        layout.prop_search(self, "target", bpy.data, "objects")
        target = bpy.data.objects.get(self.target)
        if target is not None and target.type == "ARMATURE":
            layout.prop_search(self, "target_bone", target.data, "bones")
        layout.prop(self, "orientation_mode")
        if self.orientation_mode == "OBJECT":
            layout.prop_search(self, "orientation_target", bpy.data, "objects")
            orientation = bpy.data.objects.get(self.orientation_target)
            if orientation is not None and orientation.type == "ARMATURE":
                layout.prop_search(self, "orientation_bone", orientation.data, "bones")
        layout.prop(self, "add_pole")
        layout.prop(self, "mode")
        draw_solver_settings(layout, self)

    def _lookup(self, name: str, what: str):
        from ..errors import ChainError

        if not name:
            return None
        found = bpy.data.objects.get(name)
        if found is None:
            raise ChainError(f"{what} '{name}' not found (renamed or deleted?)")
        return found

    def execute(self, context):
        from ..errors import ChainError
        from ..rig import reader
        from ..solving import current_frame

        ob = context.object
        tip = ob.data.bones.active
        try:
            reader.check_armature(ob)
            length = self.chain_length
            if self.root_bone:
                length = reader.length_to_root(ob, tip.name, self.root_bone)
            target = self._lookup(self.target, "Target")
            orientation = self._lookup(self.orientation_target, "Orientation target")
            if self.orientation_mode == "OBJECT" and orientation is None:
                raise ChainError("Pick an orientation target, or choose another orientation mode")
            names = reader.check_new_chain(ob, tip.name, length, target, self.target_bone)
            if orientation is not None:
                reader.check_new_chain(ob, tip.name, length, orientation, self.orientation_bone)
        except ChainError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}

        if target is None:
            target = self._new_target_empty(context, ob, tip)
        chain = create_chain(
            ob,
            tip.name,
            length,
            target,
            target_bone=self.target_bone,
            name=self.chain_name,
            mode=self.mode,
            orientation_mode=self.orientation_mode,
            orientation=orientation,
            orientation_bone=self.orientation_bone,
            solver_settings={name: getattr(self, name) for name in chain_settings.SOLVER_SETTINGS},
        )

        message = f"Added chain '{chain.name}': {' > '.join(names)} reaching for '{target.name}'"
        level = "INFO"
        sharing = _chains_sharing(ob, chain, names)
        if sharing and ob.quat_ik.use_bodies:
            message += f"; it shares bones with {sharing}: they are solved together as one body"
        elif sharing:
            level = "WARNING"
            message += f"; it shares bones with {sharing}, and the chain lower in the list turns them last"
        if self.add_pole:
            pole, problem = place_pole(context, ob, chain, 1.0)
            if pole is None:
                level, message = "WARNING", f"{message}, without a pole: {problem}"
            else:
                message += f", bending toward '{pole.name}'"
        if self.mode != "MANUAL":
            report = current_frame.solve_current_frame(
                ob, [chain], context.evaluated_depsgraph_get(), warm_start=self.mode == "LIVE"
            )[0]
            if report.error:
                self.report({"WARNING"}, f"{message}; it cannot be solved yet: {report.error}")
                return {"FINISHED"}
        self.report({level}, message)
        return {"FINISHED"}

    @staticmethod
    def _new_target_empty(context, ob, tip):
        location = ob.matrix_world @ ob.pose.bones[tip.name].tail
        return new_empty(context, ob, f"{tip.name}_target", location, max(0.05, 0.15 * tip.length))


def _chains_sharing(ob, chain, names) -> str:
    """The other enabled chains of ``ob`` that share a bone with ``names`` (quoted, joined)."""
    from ..errors import ChainError
    from ..rig import reader

    sharing = []
    for other in ob.quat_ik.chains:
        if other == chain or not other.enabled:
            continue
        try:
            other_names = reader.chain_bone_names(ob, other.tip_bone, other.chain_length)
        except ChainError:
            continue
        if set(names).intersection(other_names):
            sharing.append(f"'{other.name}'")
    return ", ".join(sharing)


class QUATIK_OT_remove_chain(bpy.types.Operator):
    """Remove the active Quat IK chain"""

    bl_idname = "quat_ik.remove_chain"
    bl_label = "Remove Quat IK Chain"
    bl_description = "Remove the selected Quat IK chain (the pose and the bones' limits stay as they are)"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return armature_with_chains_poll(cls, context)

    def execute(self, context):
        ob = context.object
        if not chains_editable(self, ob):
            return {"CANCELLED"}
        settings = ob.quat_ik
        index = min(settings.active_chain_index, len(settings.chains) - 1)
        name, uid = settings.chains[index].name, settings.chains[index].uid
        settings.chains.remove(index)
        tip_records.forget(ob, uid)
        settings.active_chain_index = max(0, min(index, len(settings.chains) - 1))
        session.bump(ob)
        self.report({"INFO"}, f"Removed chain '{name}'")
        return {"FINISHED"}


class QUATIK_OT_move_chain(bpy.types.Operator):
    """Move the active chain up or down the priority list"""

    bl_idname = "quat_ik.move_chain"
    bl_label = "Move Quat IK Chain"
    bl_description = "Change the chain's priority: chains higher in the list are solved first"
    bl_options = {"REGISTER", "UNDO"}

    direction: EnumProperty(
        name="Direction",
        description="Where to move the chain",
        items=(("UP", "Up", "Solve earlier"), ("DOWN", "Down", "Solve later")),
    )

    @classmethod
    def poll(cls, context):
        return armature_with_chains_poll(cls, context)

    def execute(self, context):
        settings = context.object.quat_ik
        index = settings.active_chain_index
        other = index - 1 if self.direction == "UP" else index + 1
        if not (0 <= index < len(settings.chains)) or not (0 <= other < len(settings.chains)):
            return {"CANCELLED"}
        settings.chains.move(index, other)
        settings.active_chain_index = other
        _solve_in_new_order(context.object)
        return {"FINISHED"}


def _several_chains(cls, context) -> bool:
    if len(context.object.quat_ik.chains) < 2:
        compat.poll_message(cls, "Only one chain: nothing to sort")
        return False
    return True


def _solve_in_new_order(ob) -> None:
    """After a reorder: Live and Per Frame chains solve again, in the new order, at the update
    this tag asks for (moving collection items tags nothing)."""
    session.bump(ob)
    ob.update_tag()


class QUATIK_OT_sort_chains(bpy.types.Operator):
    """Reorder the chains so that each is solved after the chains that move it"""

    bl_idname = "quat_ik.sort_chains"
    bl_label = "Sort Quat IK Chains by Dependency"
    bl_description = (
        "Move every chain below the chains that move its root or its targets, so it is solved from "
        "where they put them (an arm below its spine chain). Chains sharing bones keep their order: "
        "the later one turns the shared bones last"
    )
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return armature_with_chains_poll(cls, context) and _several_chains(cls, context)

    def execute(self, context):
        from ..chains.order import chain_dependencies, dependency_order

        ob = context.object
        if not chains_editable(self, ob):
            return {"CANCELLED"}
        settings = ob.quat_ik
        order = dependency_order(*chain_dependencies(ob))
        if order == sorted(order):
            self.report({"INFO"}, "The chains are already solved after the chains that move them")
            return {"CANCELLED"}
        names = [settings.chains[i].name for i in order]
        active = settings.active_chain_index
        listed = list(range(len(order)))  # the first place of the chain now at each place
        for place, first_place in enumerate(order):  # (by place: two chains may share a name)
            now = listed.index(first_place)
            settings.chains.move(now, place)
            listed.insert(place, listed.pop(now))
        if active in order:
            settings.active_chain_index = order.index(active)
        _solve_in_new_order(ob)
        self.report({"INFO"}, "Chains now solved in the order " + " > ".join(f"'{name}'" for name in names))
        return {"FINISHED"}


class QUATIK_OT_select_bone_chain(bpy.types.Operator):
    """Select the chain the active bone belongs to in the Quat IK Chains list"""

    bl_idname = "quat_ik.select_bone_chain"
    bl_label = "Select Quat IK Chain of Active Bone"
    bl_description = (
        "Show the Quat IK chain that moves the active bone in the panel (each press shows the next, "
        "if several chains share the bone)"
    )
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not armature_with_chains_poll(cls, context):
            return False
        bone = context.object.data.bones.active
        if bone is None:
            compat.poll_message(cls, "Select a bone")
            return False
        if not chain_settings.chains_with_bone(context.object, bone.name):
            compat.poll_message(cls, f"No Quat IK chain moves '{bone.name}'")
            return False
        return True

    def execute(self, context):
        ob = context.object
        found = chain_settings.chains_with_bone(ob, ob.data.bones.active.name)
        current = ob.quat_ik.active_chain_index
        # The next chain after the one shown, wrapping: repeated presses visit them all.
        ob.quat_ik.active_chain_index = next((index for index in found if index > current), found[0])
        return {"FINISHED"}


class QUATIK_OT_solve(bpy.types.Operator):
    """Solve Quat IK chains at the current frame and pose their bones"""

    bl_idname = "quat_ik.solve"
    bl_label = "Solve Quat IK Now"
    bl_description = "Solve the selected chain (or all enabled chains) at the current frame and pose the bones"
    bl_options = {"REGISTER", "UNDO"}

    chains: EnumProperty(
        name="Chains",
        description="Which chains to solve",
        items=(("ACTIVE", "Active", "The chain selected in the panel"), ("ALL", "All", "Every enabled chain")),
    )
    from_rest: BoolProperty(
        name="From Neutral Pose",
        description=(
            "Start from the middle of every joint's limits instead of the current pose (the result then "
            "does not depend on it; Per Frame mode solves so)"
        ),
    )

    @classmethod
    def poll(cls, context):
        return armature_with_chains_poll(cls, context)

    def execute(self, context):
        from ..rig import auto_keys
        from ..solving import current_frame

        ob = context.object
        if not armature_or_report(self, ob):
            return {"CANCELLED"}
        if self.chains == "ACTIVE":
            chain = chain_settings.active_chain(ob)
            chains = chain_settings.with_bodies(ob, [chain]) if chain is not None else []
        else:
            chains = [c for c in ob.quat_ik.chains if c.enabled]
        if not chains:
            self.report({"ERROR"}, "No chain to solve")
            return {"CANCELLED"}
        depsgraph = context.evaluated_depsgraph_get()
        reports = current_frame.solve_current_frame(ob, chains, depsgraph, warm_start=not self.from_rest, record=False)
        errors = [r.error for r in reports if r.error]
        if errors and len(errors) == len(reports):
            self.report({"ERROR"}, errors[0])  # nothing was written: the scene is as it was
            return {"CANCELLED"}
        for r in reports:
            current_frame.record_status(r.chain, r)
        current_frame.record_pin_status(ob, [r.solution for r in reports])
        for error in errors:
            self.report({"WARNING"}, error)
        keyed = sum(auto_keys.key_chain_bones(context, r.solution.rig) for r in reports if r.error is None)
        summary = []
        for r in reports:
            if r.error is None:
                outcome = r.solution.outcome
                state = "reached" if outcome.converged[0] else "not reached"
                summary.append(
                    f"'{r.chain.name}' {state} (error {outcome.position_error[0]:.5g}, {outcome.iterations[0]} sweeps)"
                )
        keyed_note = f"; {keyed} bone(s) keyed (Auto Keying)" if keyed else ""
        self.report({"INFO"}, "Solved " + ", ".join(summary) + keyed_note)
        return {"FINISHED"}


class QUATIK_OT_learn_start_poses(bpy.types.Operator):
    """Learn a few start poses that together solve nearly every reachable target (Blow 2002)"""

    bl_idname = "quat_ik.learn_start_poses"
    bl_label = "Learn Quat IK Start Poses"
    bl_description = (
        "Try many start poses on sample targets and keep the few that solve nearly all of them "
        "(takes a few seconds; stored with the chain, relearn after changing the rig or its limits). "
        "For a chain solved with others as one body, the body's start poses, kept on its first chain"
    )
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return armature_with_chains_poll(cls, context)

    def execute(self, context):
        import time

        from ..chains import learned_store
        from ..errors import ChainError
        from ..rig import reader
        from ..solving import chain_jobs, chain_options, current_frame

        ob = context.object
        chain = chain_settings.active_chain(ob)
        started = time.perf_counter()
        try:
            body = chain_settings.with_bodies(ob, [chain])
            depsgraph = context.evaluated_depsgraph_get()
            jobs = [current_frame.read_job(ob, c, depsgraph, warm_start=False) for c in body]
            learned_body = chain_jobs.learn_body_starts(jobs)
            if learned_body is None:
                rig = reader.read_chain_rig(ob, chain)
                learned = chain_options.learn_start_poses(rig.chain, chain)
        except (ChainError, ValueError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        seconds = time.perf_counter() - started
        if learned_body is not None:
            first = body[0]
            learned_store.store_body(first, learned_body)
            first.use_learned_start = True
            names = ", ".join(f"'{c.name}'" for c in body)
            self.report(
                {"INFO"},
                f"Learned {len(learned_body.starts.start_rotations)} start poses for the body of {names} in "
                f"{seconds:.1f} s ({learned_body.starts.coverage:.0%} of sample goals covered), kept on '{first.name}'",
            )
            return {"FINISHED"}
        learned_store.store(chain, rig, learned)
        chain.use_learned_start = True
        self.report(
            {"INFO"},
            f"Learned {len(learned.start_rotations)} start poses for '{chain.name}' in "
            f"{seconds:.1f} s ({learned.coverage:.0%} of sample targets covered)",
        )
        return {"FINISHED"}


CLASSES = (
    QUATIK_OT_add_chain,
    QUATIK_OT_remove_chain,
    QUATIK_OT_move_chain,
    QUATIK_OT_sort_chains,
    QUATIK_OT_select_bone_chain,
    QUATIK_OT_solve,
    QUATIK_OT_learn_start_poses,
)
