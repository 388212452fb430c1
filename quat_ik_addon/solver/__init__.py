"""quat-ik solver core: numpy only, never imports ``bpy``.

Conventions used throughout the package:

* Quaternions are ``(w, x, y, z)``, as in Blender's ``mathutils``; arrays of them are
  shaped ``(..., 4)``.  A pose rotation is exactly what Blender stores in
  ``pose_bone.rotation_quaternion``: the rotation of a bone relative to its rest frame.
* Every bone's rest frame has the bone along its local +Y axis (Blender's convention).
* Angles are radians inside the solver; only the rig spec (a file people edit) and the
  Blender UI speak degrees.
* Arrays are batched over targets first: ``(N, ...)`` for N targets, ``(N, n_bones, ...)``
  for per-bone data.
"""
