"""Session script (bpy 5.0 or Blender 3.4): install the zip like a user, check what got
registered, use it once, uninstall, and check Blender is back to its state before install.

argv: ZIP
"""

import sys
from pathlib import Path

import bpy  # first: in the bpy module, importing bpy is what puts addon_utils on sys.path

# isort: split
import addon_utils

from tests.addon_footprint import addon_modules, difference, registered_timers, snapshot
from tools.blender_session import (
    EXTENSION_ID,
    EXTENSION_REPO,
    add_quat_ik_chain,
    install_addon,
    make_bone_chain,
    uninstall_addon,
    uses_extension_platform,
)

zip_path = sys.argv[1]
print(f"Blender {bpy.app.version_string}: installing {zip_path}")

before = snapshot()
module = install_addon(zip_path)
enabled = snapshot()
added = {field: new for field, (new, _gone) in difference(before, enabled).items()}
# Properties of the new types themselves are noise here; show properties added to Blender's types.
shown = {**added, "properties": [p for p in added.get("properties", []) if p[0] in before.type_names]}
print(f"enabling {module} added: {shown}")

# What must be registered: the add-on's own class table, plus names other code relies on.
class_table = sys.modules[module]._registered_classes()
assert class_table, "the add-on's class table is empty"
for cls in class_table:
    assert cls.is_registered, f"{cls.__name__} from the class table is not registered"
rna_names = {cls.bl_rna.identifier for cls in class_table}  # e.g. QUAT_IK_OT_add_chain for QUATIK_OT_add_chain
assert {"quat_ik.add_chain", "quat_ik.remove_chain"} <= enabled.operators, sorted(added.get("operators", []))
assert "QUATIK_PT_chains" in enabled.type_names
assert ("Object", "quat_ik") in enabled.properties
assert all(not gone for _new, gone in difference(before, enabled).values()), "enabling removed something"
foreign_handlers = [h for h in added.get("handlers", []) if not h[1].startswith(module + ".")]
assert not foreign_handlers, f"handlers added while enabling that are not the add-on's: {foreign_handlers}"

# Use it once, so disabling happens with add-on data in the file (as it does for users).
ob = make_bone_chain("Arm3", 3)
add_quat_ik_chain(ob, tip_bone="Bone.002", chain_length=3)
assert [c.tip_bone for c in ob.quat_ik.chains] == ["Bone.002"]
bpy.ops.object.mode_set(mode="OBJECT")

modules = addon_modules(module)  # taken while enabled: disabling may drop them from sys.modules
uninstall_addon(module)
after = snapshot()

leftovers = difference(before, after)
assert not leftovers, f"still there after uninstalling (added, removed) per kind: {leftovers}"
assert not [name for name in dir(bpy.types) if name.startswith(("QUATIK_", "QUAT_IK_"))]
assert not rna_names & set(dir(bpy.types)), rna_names & set(dir(bpy.types))
for cls in class_table:
    assert not cls.is_registered, f"{cls.__name__} is still registered"
for owner in (bpy.types.Object, bpy.types.PoseBone):
    assert not hasattr(owner, "quat_ik"), f"{owner.__name__}.quat_ik is still defined"
assert not registered_timers(modules), f"timers still registered after uninstalling: {registered_timers(modules)}"
assert addon_utils.check(module) == (False, False), addon_utils.check(module)
if uses_extension_platform():
    install_dir = Path(bpy.utils.user_resource("EXTENSIONS", path=EXTENSION_REPO)) / EXTENSION_ID
else:
    install_dir = Path(bpy.utils.user_resource("SCRIPTS", path="addons")) / EXTENSION_ID
assert not install_dir.exists(), f"{install_dir} still exists after uninstalling"
print(f"uninstalled {module}: nothing left behind")
