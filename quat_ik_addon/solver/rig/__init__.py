"""Rigs from outside Blender: the rig spec file (``spec``, ``spec_values``), its chains as solver
objects (``spec_chain``), bone rest frames computed as Blender computes them (``rest_pose``),
and the reference chains of the tests, benchmarks and demo (``reference_chains``)."""
