"""Library overrides: an animator who links a character and overrides it may change its Quat IK
settings (a chain's mode, target and solver settings, a bone's limits) and add chains, and the
changes are saved with the animator's file.

Blender keeps a change to an overridden datablock only for properties flagged
``LIBRARY_OVERRIDABLE``, and lets a collection take new items there only with
``USE_INSERTION``; without them the change holds until the file is reloaded, then silently
reverts to the library's value. Rather than repeat the flags on some sixty declarations, the
property groups get them as they are registered (``make_overridable``).

Joint limits are the rig's, like its bones: the pose bones' ``quat_ik`` is not overridable
(flagged, Blender 5.0 failed to apply it on reload: "expected ID type"), and the limit tools
refuse an override with a message that says where to change them.
"""

from __future__ import annotations

import sys

import bpy

OVERRIDE = {"LIBRARY_OVERRIDABLE"}
COLLECTION_OVERRIDE = {"LIBRARY_OVERRIDABLE", "USE_INSERTION"}


def make_overridable(cls) -> None:
    """Flag every property a PropertyGroup declares as overridable; call before registering it.

    The declarations are annotations, strings under ``from __future__ import annotations``,
    which Blender evaluates in the class's module when it registers the class. They are
    evaluated here the same way, given the flag, and put back as property declarations.
    """
    namespace = vars(sys.modules[cls.__module__])
    annotations = cls.__annotations__  # the class's own: every property group declares some
    for name, declared in list(annotations.items()):
        prop = eval(declared, namespace) if isinstance(declared, str) else declared
        function = getattr(prop, "function", None)
        if function is None:
            continue
        flags = COLLECTION_OVERRIDE if function is bpy.props.CollectionProperty else OVERRIDE
        annotations[name] = function(**{**prop.keywords, "override": flags})
