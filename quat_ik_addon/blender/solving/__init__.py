"""Where the Blender layer hands chains to the solver's one pipeline (``solver.request``): a
chain's settings read into solver options (``chain_options``), an armature's chains solved over
F frames in priority order (``chain_jobs``),
chains solved at the current frame and their pose written (``current_frame``: Solve Now and
the handlers), and remembered solves (``cache``).
"""
