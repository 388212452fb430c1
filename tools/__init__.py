"""Developer tools: building the extension zip, the demo, helpers that run inside Blender.

A package (not loose scripts) so tests can ``import tools.build_extension``; each tool still
runs as ``python tools/<name>.py``.
"""
