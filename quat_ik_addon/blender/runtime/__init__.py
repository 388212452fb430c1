"""Live and Per Frame: the app handlers that re-solve chains when their inputs change
(``handlers``), what a Live update must solve (``live_inputs``), and the session state they and
the rest of the Blender layer keep between calls (``state``: never saved).
"""
