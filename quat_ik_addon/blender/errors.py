"""The one exception the Blender layer raises for problems a user can fix.

Readers, solvers and writers raise :class:`ChainError` with a message written for the
status bar; operators turn it into ``self.report({'ERROR'}, ...)`` and return CANCELLED,
handlers store it on the chain for the panel. No bpy here.
"""


class ChainError(Exception):
    """A chain cannot be read, solved or written; ``str(error)`` is the user-facing reason."""
