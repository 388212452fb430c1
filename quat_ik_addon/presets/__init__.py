"""Anatomical joint-limit presets: one-bone rig specs (``*.rig.json``) and ``index.json``.

Data only; list and load them with :mod:`quat_ik_addon.solver.limits.presets`.  The index says
where each range comes from and the axis convention the presets use (docs/limits.md).
"""
