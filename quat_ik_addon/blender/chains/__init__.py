"""Chains as the .blend keeps them: their settings on the armature object (``settings``), the
list they are added to (``listing``), and what keeps them right through edits of the rig: the
record each leaves on its tip bone (``tip_records``), which carries it through Join, Separate,
Symmetrize and duplicates (``records``), bone renames (``bone_renames``), targets deleted under
them (``deleted_targets``), their mirror image (``mirroring``), the order they solve in
(``order``) and their learned start poses (``learned_store``).
"""
