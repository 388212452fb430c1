"""What an add-on adds to a running Blender, measured from inside a session (bpy 5.0 or 3.4).

Take ``snapshot()`` before enabling and after disabling: the two must be equal, or the add-on
left something behind. The snapshot is generic (every type, property, operator, app handler and
add-on keymap item Blender exposes to Python), so it keeps working as classes and handlers
are added. Not observable from Python, hence not covered: draw handlers
(``SpaceView3D.draw_handler_add``) and ``bpy.app.timers``, which can only be asked about a known
function; ``registered_timers(modules)`` asks about every function of the add-on's modules.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import bpy


@dataclass(frozen=True)
class Footprint:
    type_names: frozenset[str]
    properties: frozenset[tuple[str, str]]  # (type name, property identifier)
    operators: frozenset[str]  # "category.name"
    # (handler list, function's module.qualname, n-th such function in that list): counts copies,
    # ignores order, so an add-on that inserts its handler first does not seem to move Blender's.
    handlers: frozenset[tuple[str, str, int]]
    keymap_items: frozenset[tuple[str, str]]  # (keymap name, operator idname) in the add-on keyconfig


def snapshot() -> Footprint:
    type_names, properties = set(), set()
    for name in dir(bpy.types):
        rna = getattr(getattr(bpy.types, name, None), "bl_rna", None)
        if rna is None:
            continue
        type_names.add(name)
        properties.update((name, prop) for prop in rna.properties.keys())
    operators = {f"{category}.{op}" for category in dir(bpy.ops) for op in dir(getattr(bpy.ops, category))}
    handlers = set()
    for list_name in dir(bpy.app.handlers):
        handler_list = getattr(bpy.app.handlers, list_name)
        if isinstance(handler_list, list):
            seen: dict[str, int] = {}
            for fn in handler_list:
                name = _describe(fn)
                seen[name] = seen.get(name, 0) + 1
                handlers.add((list_name, name, seen[name]))
    keyconfig = bpy.context.window_manager.keyconfigs.addon
    keymap_items = set()
    if keyconfig is not None:
        keymap_items = {(km.name, kmi.idname) for km in keyconfig.keymaps for kmi in km.keymap_items}
    return Footprint(
        frozenset(type_names), frozenset(properties), frozenset(operators), frozenset(handlers), frozenset(keymap_items)
    )


def difference(before: Footprint, after: Footprint) -> dict[str, tuple[list, list]]:
    """For each field that differs: (items only in ``after``, items only in ``before``)."""
    diff = {}
    for field in Footprint.__dataclass_fields__:
        old, new = getattr(before, field), getattr(after, field)
        if old != new:
            diff[field] = (sorted(new - old), sorted(old - new))
    return diff


def addon_modules(module_name: str) -> list[types.ModuleType]:
    """The add-on's package and every submodule already imported."""
    return [m for name, m in sorted(sys.modules.items()) if name == module_name or name.startswith(module_name + ".")]


def registered_timers(modules: list[types.ModuleType]) -> list[str]:
    """Functions defined in ``modules`` that are currently registered as bpy.app.timers.

    Take the module list with ``addon_modules`` while the add-on is enabled: disabling may drop
    its modules from ``sys.modules``.
    """
    found = []
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
                if bpy.app.timers.is_registered(value):
                    found.append(f"{module.__name__}.{value.__qualname__}")
    return found


def _describe(fn: object) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
