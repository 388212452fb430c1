"""Joint limits as the .blend keeps them: the per-bone settings (``settings``), their conversion
to rig-spec and solver limits (``conversion``), and their mirror image where Symmetrize copied
them in Edit Mode (``symmetrized``).
"""
