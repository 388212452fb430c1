"""Helpers that run INSIDE a Blender session: the bpy 5.0 module or Debian's Blender 3.4 binary.

Used by ``tools/demo.py`` and by the scripts tests run in fresh sessions. They do what a user
does (install the zip, build a rig, press "Add Quat IK Chain") so those paths get exercised.
Set ``BLENDER_USER_RESOURCES`` to a temporary folder before ``import bpy`` (or before starting
the binary) so installing never touches the user's own Blender configuration.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import bpy  # first: in the bpy module, importing bpy is what puts addon_utils on sys.path

# isort: split
import addon_utils

EXTENSION_ID = "quat_ik"
EXTENSION_REPO = "user_default"  # the local repository every Blender 4.2+ has


def uses_extension_platform() -> bool:
    """Blender 4.2+ installs zips as extensions; older versions as legacy add-ons."""
    return bpy.app.version >= (4, 2, 0)


def install_addon(zip_path: str | Path) -> str:
    """Install and enable the add-on zip; return the add-on's module name."""
    if uses_extension_platform():
        result = bpy.ops.extensions.package_install_files(
            filepath=str(zip_path), repo=EXTENSION_REPO, enable_on_install=True
        )
        module = f"bl_ext.{EXTENSION_REPO}.{EXTENSION_ID}"
    else:
        bpy.ops.preferences.addon_install(filepath=str(zip_path), overwrite=True)
        # addon_enable, not `--addons`: the latter skips preferences.addons (see BLENDER_NOTES).
        result = bpy.ops.preferences.addon_enable(module=EXTENSION_ID)
        module = EXTENSION_ID
    if result != {"FINISHED"} or addon_utils.check(module) != (True, True):
        raise RuntimeError(
            f"installing {zip_path} failed: operator returned {result}, {module} state is "
            f"(default, loaded) = {addon_utils.check(module)}"
        )
    return module


def uninstall_addon(module: str) -> None:
    """Disable the add-on and delete its files, as the Preferences "Uninstall"/"Remove" button does."""
    if uses_extension_platform():
        repos = list(bpy.context.preferences.extensions.repos)
        repo_index = next(i for i, repo in enumerate(repos) if repo.module == EXTENSION_REPO)
        result = bpy.ops.extensions.package_uninstall(repo_index=repo_index, pkg_id=EXTENSION_ID)
    else:
        result = bpy.ops.preferences.addon_disable(module=module)
        _remove_legacy_addon_files(module)
    if result != {"FINISHED"} or addon_utils.check(module)[1]:
        raise RuntimeError(f"uninstalling {module} failed: operator returned {result}")


def _remove_legacy_addon_files(module: str) -> None:
    """What ``preferences.addon_remove`` does, minus its final ``context.area.tag_redraw()``,
    which raises in background mode (no area) in Blender 3.4."""
    package = next(m for m in addon_utils.modules() if m.__name__ == module)
    package_dir = Path(package.__file__).parent
    if package_dir.parent.name != "addons":  # never delete anything outside scripts/addons
        raise RuntimeError(f"refusing to delete {package_dir}: not an installed add-on folder")
    shutil.rmtree(package_dir)
    addon_utils.modules_refresh()


def make_bone_chain(name: str, n_bones: int, *, bone_length: float = 1.0) -> bpy.types.Object:
    """A new armature object of ``n_bones`` connected bones straight up +Z, active, in object mode.

    Bones are named ``Bone``, ``Bone.001``, ... (Blender's own naming), root first.
    """
    armature = bpy.data.armatures.new(name)
    ob = bpy.data.objects.new(name, armature)
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")  # bones can only be created as edit bones
    parent = None
    for i in range(n_bones):
        bone = armature.edit_bones.new("Bone")
        bone.head = (0.0, 0.0, i * bone_length)
        bone.tail = (0.0, 0.0, (i + 1) * bone_length)
        bone.parent = parent
        bone.use_connect = parent is not None
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    return ob


def add_quat_ik_chain(ob: bpy.types.Object, *, tip_bone: str, chain_length: int) -> None:
    """Press "Add Quat IK Chain" with ``tip_bone`` active in pose mode; leaves ``ob`` in pose mode."""
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="POSE")
    ob.data.bones.active = ob.data.bones[tip_bone]
    result = bpy.ops.quat_ik.add_chain(chain_length=chain_length)
    if result != {"FINISHED"}:
        raise RuntimeError(f"quat_ik.add_chain on {ob.name}:{tip_bone} returned {result}")
