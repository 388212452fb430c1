"""Shots: the frames of a motion solved so the pose follows it (``sequence`` and its ``plan``,
``branch_spans``, ``pose_curves``), loops (``cycles``), and the jumps a viewer sees
(``pose_jumps``) eased for an animator who prefers smooth motion (``jump_easing``)."""
