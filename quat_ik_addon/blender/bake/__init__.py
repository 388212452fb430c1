"""Baking chains into keyframes: the bake's three steps (``bake``), its inputs sampled straight
from the F-curves (``input_sampling``), the one place that writes keys (``keyframes``) and the
unkeyed edits kept while a bake steps through frames (``unkeyed_edits``).
"""
