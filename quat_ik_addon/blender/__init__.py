"""Everything that touches ``bpy``: properties, rig reading and writing, operators, panel,
handlers, drawing, baking and version compatibility. Imports go one way: this package
imports the solver, never the reverse."""
