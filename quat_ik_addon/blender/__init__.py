"""Everything that touches ``bpy``, grouped by job: ``chains`` and ``limits`` (the settings the
.blend keeps, and what keeps them right through edits of the rig), ``rig`` (reading a chain
from the armature, writing poses), ``solving`` (handing chains to the solver), ``runtime``
(Live and Per Frame handlers, session state), ``bake``, ``operators`` and ``ui`` (panels, menus,
the overlay, preferences). Every room reaches ``compat`` (each Blender version difference),
``errors`` (the one exception a user can act on) and ``overrides`` (settings a library override
may change). Imports go one way: this package imports the solver, never the reverse, and its
modules import each other without a loop (``tests/test_import_graph.py``).
"""
