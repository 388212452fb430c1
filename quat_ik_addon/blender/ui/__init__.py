"""What a user sees: the sidebar panels (``panels``, ``limits_panel``, ``solver_settings``), our
menu entries (``menus``), the joint-limit overlay drawn in the viewport (``overlays``; its meshes
are ``solver.limits.overlay_geometry``), what the handlers did told in the window (``news``) and the
add-on's preferences (``preferences``).
"""
