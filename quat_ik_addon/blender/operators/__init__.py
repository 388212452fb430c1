"""The operators: what a user runs from the sidebar, the menus and F3. One module per tool
(chains, pole, snap, mirror, bake, limits and their windows, presets, rig-spec files, fitting,
IK conversion, pose jumps), and ``common`` with the polls and checks several of them share.
Each checks everything before it changes anything, and imports heavy modules inside
``execute`` so enabling the add-on stays instant.
"""
