"""Session: every panel, list, menu entry, operator dialog and the preferences of the add-on
draw without an error, and names only layout calls, properties, operators and icons that exist.

Background bpy has no window to draw into, so each draw function runs against a recording
layout that checks what it is asked to show: a layout call against ``UILayout``'s own
functions, a property name against its data's RNA (or the operator's, for a dialog), an
operator id and the properties set on its button, an icon name against Blender's icons, and
every UI list's rows drawn through ``draw_item``. A window test only sees panels that are
open; sub-panels closed by default and popup dialogs are drawn here, for a rig in several
states (no chain; a solved chain with warnings and jumps; every joint kind and window shape;
targets, orientation targets and poles given as bones of an armature).

argv: WORKDIR
"""

import inspect
import math

import bpy

from tests.blender.sessions.common import Checks, add_chain, addon, empty, pose_mode, reset_scene, straight_rig

checks = Checks("every draw function draws")
LAYOUT_FUNCTIONS = set(bpy.types.UILayout.bl_rna.functions.keys())
ICONS = set(bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"].enum_items.keys())
problems: list[str] = []
labels: list[str] = []


def _icon_ok(where: str, icon) -> None:
    if icon is not None and icon not in ICONS:
        problems.append(f"{where}: no icon {icon!r}")


def _operator_type(idname: str):
    module, _, name = idname.partition(".")
    operator = getattr(getattr(bpy.ops, module, None), name, None)
    try:
        return operator.get_rna_type() if operator is not None else None
    except KeyError:  # bpy.ops names any attribute; unknown ones fail here
        return None


def _properties_of(data) -> set[str] | None:
    """Names ``prop`` may show for ``data``: its RNA's, or an operator shim's."""
    if isinstance(data, Shim):
        return data._property_names
    rna = getattr(data, "bl_rna", None)
    return None if rna is None else set(rna.properties.keys())


class OperatorButton:
    """What ``layout.operator`` returns: its properties may be set, if the operator has them."""

    def __init__(self, where: str, rna) -> None:
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_names", set() if rna is None else set(rna.properties.keys()))

    def __setattr__(self, name, value) -> None:
        if name not in self._names:
            problems.append(f"{self._where}: the operator has no property {name!r}")


class Recorder:
    """A stand-in for ``UILayout`` that checks every call made on it."""

    def __init__(self, where: str) -> None:
        object.__setattr__(self, "_where", where)

    def __setattr__(self, name, value) -> None:
        if name not in bpy.types.UILayout.bl_rna.properties:
            problems.append(f"{self._where}: UILayout has no attribute {name!r}")

    def __getattr__(self, name):
        if name not in LAYOUT_FUNCTIONS:
            problems.append(f"{self._where}: UILayout has no function {name!r}")

        def call(*args, icon=None, **kwargs):
            _icon_ok(f"{self._where}.{name}", icon)
            return Recorder(self._where)

        return call

    def _check_property(self, data, name: str) -> None:
        names = _properties_of(data)
        if names is None:
            problems.append(f"{self._where}: {data!r} has no properties (showing {name!r})")
        elif name not in names:
            problems.append(f"{self._where}: {type(data).__name__} has no property {name!r}")

    def label(self, *, text="", icon=None, **kwargs) -> None:
        _icon_ok(f"{self._where}.label", icon)
        labels.append(text)

    def prop(self, data, name, *, icon=None, **kwargs) -> None:
        _icon_ok(f"{self._where}.prop", icon)
        self._check_property(data, name)

    def prop_search(self, data, name, search_data, search_name, *, icon=None, **kwargs) -> None:
        _icon_ok(f"{self._where}.prop_search", icon)
        self._check_property(data, name)
        self._check_property(search_data, search_name)

    def operator(self, idname, *, icon=None, **kwargs) -> OperatorButton:
        _icon_ok(f"{self._where}.operator", icon)
        rna = _operator_type(idname)
        if rna is None:
            problems.append(f"{self._where}: no operator {idname!r}")
        return OperatorButton(f"{self._where} > {idname}", rna)

    def operator_menu_enum(self, idname, name, *, icon=None, **kwargs) -> OperatorButton:
        _icon_ok(f"{self._where}.operator_menu_enum", icon)
        rna = _operator_type(idname)
        if rna is None or name not in rna.properties:
            problems.append(f"{self._where}: no operator {idname!r} with an enum {name!r}")
        return OperatorButton(f"{self._where} > {idname}", rna)

    def template_list(self, list_type, list_id, data, name, active_data, active_name, **kwargs) -> None:
        self._check_property(data, name)
        self._check_property(active_data, active_name)
        ui_list = getattr(bpy.types, list_type, None)
        if ui_list is None:
            problems.append(f"{self._where}: no UI list {list_type!r}")
            return
        for index, item in enumerate(getattr(data, name)):
            shim = Shim(ui_list, f"{list_type} row {index}")
            shim.draw_item(bpy.context, Recorder(f"{list_type} row {index}"), data, item, 0, data, name, index)
            drawn.add(list_type)

    def separator(self, **kwargs) -> None:
        pass


class Shim:
    """``self`` for a panel, list, menu or operator's draw: the class's methods bound to it, a
    recording layout, and for an operator its properties at their defaults (or given)."""

    def __init__(self, cls, where: str, rna=None, **values) -> None:
        self._cls = cls
        self.layout = Recorder(where)
        self._property_names = set()
        if rna is not None:
            for prop in rna.properties:
                if prop.identifier == "rna_type":
                    continue
                self._property_names.add(prop.identifier)
                if prop.type in {"POINTER", "COLLECTION"}:
                    setattr(self, prop.identifier, None)
                elif getattr(prop, "is_array", False):
                    setattr(self, prop.identifier, tuple(prop.default_array))
                else:
                    setattr(self, prop.identifier, prop.default)
        for name, value in values.items():
            setattr(self, name, value)

    def __getattr__(self, name):
        raw = inspect.getattr_static(self._cls, name)
        if isinstance(raw, staticmethod):
            return raw.__func__
        if isinstance(raw, classmethod):
            return getattr(self._cls, name)
        if inspect.isfunction(raw):
            return raw.__get__(self)
        return getattr(self._cls, name)


class Context:
    """``bpy.context`` with the region a sidebar would have (none here) and given overrides."""

    def __init__(self, **overrides) -> None:
        self._overrides = overrides

    def __getattr__(self, name):
        if name in self._overrides:
            return self._overrides[name]
        return getattr(bpy.context, name)


drawn: set[str] = set()
package = addon()
classes = package._registered_classes()
panels = [cls for cls in classes if issubclass(cls, bpy.types.Panel)]
operators = [cls for cls in classes if issubclass(cls, bpy.types.Operator) and "draw" in vars(cls)]
ui_lists = [cls for cls in classes if issubclass(cls, bpy.types.UIList)]
preferences = [cls for cls in classes if issubclass(cls, bpy.types.AddonPreferences)]


def draw_all(state: str, ob, **operator_values) -> None:
    """Every panel that polls true, the menu entries, and every operator dialog."""
    context = Context(object=ob, active_object=ob, region=None, active_pose_bone=bpy.context.active_pose_bone)
    for cls in panels:
        where = f"{state}: {cls.__name__}"
        shim = Shim(cls, where)
        try:
            if hasattr(cls, "poll") and not cls.poll(context):
                continue
            if "draw_header" in dir(cls):
                shim.draw_header(context)
            shim.draw(context)
            drawn.add(cls.__name__)
        except Exception as error:  # a draw that raises is what this session looks for
            problems.append(f"{where}: {type(error).__name__}: {error}")
    for name, draw in submodule_menus():
        where = f"{state}: {name} entries"
        try:
            draw(Shim(object, where), context)
            drawn.add(draw.__name__)
        except Exception as error:
            problems.append(f"{where}: {type(error).__name__}: {error}")
    for cls in preferences:
        where = f"{state}: {cls.__name__}"
        try:
            Shim(cls, where, cls.bl_rna).draw(context)
            drawn.add(cls.__name__)
        except Exception as error:
            problems.append(f"{where}: {type(error).__name__}: {error}")
    for cls in operators:
        where = f"{state}: {cls.__name__} dialog"
        try:
            rna = _operator_type(cls.bl_idname)
            Shim(cls, where, rna, **operator_values.get(cls.bl_idname, {})).draw(context)
            drawn.add(cls.__name__)
        except Exception as error:
            problems.append(f"{where}: {type(error).__name__}: {error}")


def submodule_menus():
    import importlib

    menus = importlib.import_module(f"{package.__name__}.blender.ui.menus")
    return menus._entries()


with checks.step("an armature without chains draws"):
    # ---- state 1: an armature without chains
    reset_scene()
    ob = straight_rig("Arm", 4)
    target = empty("Target", (1.0, 0.5, 2.0))
    pose_mode(ob, "B3")
    draw_all("no chain", ob)

with checks.step("a solved chain with every joint kind and window shape draws"):
    # ---- state 2: a solved Live chain with a warning and pose jumps; every joint kind and window
    add_chain(ob, "B3", 4, "Target", mode="LIVE")
    bpy.ops.quat_ik.solve()
    chain = ob.quat_ik.chains[0]
    chain.status_message = "A long warning that the panel wraps over several lines of its box"
    chain.status_jump_frames, chain.status_largest_jump = "12,30", math.radians(40.0)
    chain.influence = 0.5
    for bone, kind in (("B0", "BALL"), ("B1", "HINGE"), ("B2", "FIXED"), ("B3", "BALL")):
        limits = ob.pose.bones[bone].quat_ik
        limits.joint_type = kind
        limits.stiffness = 0.25
        if kind == "BALL":
            limits.use_twist_range = True
            limits.use_twist_reference = bone == "B3"
        if kind == "HINGE":
            limits.use_hinge_range = True
            limits.hinge_axis = "CUSTOM"
    for shape in ("POLYGON", "CONE", "ELLIPTIC_CONE"):
        pose_mode(ob, "B0")
        bpy.ops.quat_ik.window_add(shape=shape)
        ob.pose.bones["B0"].quat_ik.windows[-1].use_x_axis = True
        draw_all(f"ball with a {shape.lower()} window", ob)
    for bone in ("B1", "B2", "B3"):
        pose_mode(ob, bone)
        draw_all(f"bone {bone}", ob)
    # A pinned bone and a stretchy one: the pin list, the pin's fields and the stretch range draw.
    pose_mode(ob, "B1")
    bpy.ops.quat_ik.add_pin(frame_start=1, frame_end=20)
    ob.pose.bones["B1"].quat_ik.use_stretch = True
    ob.quat_ik.pins[0].status_solved, ob.quat_ik.pins[0].status_held = True, False
    draw_all("a pinned, stretchy bone", ob)
    ob.quat_ik.pins.clear()
    ob.pose.bones["B1"].quat_ik.use_stretch = False

with checks.step("targets, orientation target and pole on another armature's bones draw"):
    # ---- state 3: targets, orientation target and pole as bones of another armature; a failed solve
    other = straight_rig("Props", 2)
    other.location = (2.0, 0.0, 0.0)
    pose_mode(ob, "B3")
    chain.target_object, chain.target_bone = other, "B1"
    chain.orientation_mode, chain.orientation_object, chain.orientation_bone = "OBJECT", other, "B0"
    chain.pole_object, chain.pole_bone = other, "B0"
    chain.status_solved = False
    draw_all("bone targets, not solved", ob, **{"quat_ik.add_chain": {"target": "Props", "target_bone": "B1"}})
    chain.orientation_mode = "MATCH_TARGET"
    chain.pole_object = None
    draw_all("matching the target's rotation, no pole", ob)

with checks.step("the panel names the chain that moves the active bone, Select Chain shows it"):
    # ---- state 4: the active bone is in another chain than the one shown; the list marks its chain
    chain.target_object, chain.target_bone, chain.chain_length = target, "", 2  # B2, B3
    add_chain(ob, "B1", 2, "Target")  # B0, B1
    ob.quat_ik.active_chain_index = 0
    pose_mode(ob, "B0")
    labels.clear()
    draw_all("active bone in the other chain", ob)
    checks.check("the panel says which chain moves the active bone", "'B0' is in 'B1'" in labels, labels)
    checks.check("the chain list draws a row for each chain", labels.count("×2") == 2, labels)
    checks.check("Select Chain of Active Bone shows its chain", bpy.ops.quat_ik.select_bone_chain() == {"FINISHED"})
    checks.check("... which is the second", ob.quat_ik.active_chain_index == 1, ob.quat_ik.active_chain_index)
with checks.step("no hint when the chain shown moves the active bone"):
    labels.clear()
    draw_all("active bone in the chain shown", ob)
    checks.check("no hint when the chain shown moves the bone", not any(" is in " in t for t in labels), labels)
    pose_mode(ob, "B2")
    bpy.ops.quat_ik.select_bone_chain()
    checks.check("... and back to the first for a bone of the first", ob.quat_ik.active_chain_index == 0)
with checks.step("Select Chain of Active Bone cannot run without chains"):
    other.data.bones.active = None
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.object.select_all(action="DESELECT")
    bpy.context.view_layer.objects.active = other
    checks.check(
        "without chains it cannot run, and says why",
        not bpy.ops.quat_ik.select_bone_chain.poll(),
    )

with checks.step("every draw function drew and named only what exists"):
    # ---- what must have been drawn, and what went wrong
    names = {cls.__name__ for cls in panels + operators + ui_lists + preferences}
    checks.check("every panel, list, operator dialog and preference was drawn", names <= drawn, sorted(names - drawn))
    checks.check("the add-on has its preferences", bool(preferences), [cls.__name__ for cls in preferences])
    checks.check("the menu entries were drawn", {"draw_pose_ik_menu", "draw_pose_menu"} <= drawn, sorted(drawn))
    checks.check("nothing raised or named what does not exist", not problems, "\n    ".join(sorted(set(problems))))
    checks.check("the learned start poses row is in the solver settings", any("Start poses" in t for t in labels), "")
checks.close()
