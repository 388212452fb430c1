"""Reading the rig and writing poses: a chain read from the (evaluated) armature (``reader``,
``bones``), rotations in each bone's own rotation mode (``rotation_modes``), locked channels
(``locks``), the pose written back (``pose_writer``), the bones' own pose that Influence blends
with (``own_pose``) and Auto Keying of what the operators pose (``auto_keys``).
"""
