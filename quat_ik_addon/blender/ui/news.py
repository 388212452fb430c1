"""What the handlers did on their own, told where a user looks: the status bar and the Info log.

A handler cannot report as an operator does, and a chain listed after a Join or mirrored
after a Symmetrize should not go unnoticed. So the lines wait in ``session.news`` and a timer
runs a hidden operator that reports them (the console gets them at once, and is all there is
in the background).
"""

from __future__ import annotations

import bpy

from ..runtime.state import session


def tell(lines: list[str]) -> None:
    """Print ``lines`` now and report them in the window at the next chance."""
    for line in lines:
        print(f"Quat IK chains: {line}")  # news, not a problem ("Quat IK: " lines are those)
    if not lines or bpy.app.background:
        return
    session.news.extend(lines)
    if not bpy.app.timers.is_registered(_report):
        bpy.app.timers.register(_report, first_interval=0.0)


def stop() -> None:
    """Forget news not yet reported and the timer that would report them (add-on disabled)."""
    session.news.clear()
    if bpy.app.timers.is_registered(_report):
        bpy.app.timers.unregister(_report)


def _report() -> None:
    windows = bpy.context.window_manager.windows if bpy.context.window_manager else ()
    if not session.news or not windows:
        session.news.clear()
        return
    try:
        with bpy.context.temp_override(window=windows[0]):
            bpy.ops.quat_ik.report_news()
    except RuntimeError as error:  # no window to report in after all: the console has the lines
        session.news.clear()
        print(f"Quat IK: the status bar could not show what changed: {error}")


class QUATIK_OT_report_news(bpy.types.Operator):
    """Report what Quat IK did to chains on its own (after Join, Separate or Symmetrize)"""

    bl_idname = "quat_ik.report_news"
    bl_label = "Report Quat IK News"
    bl_description = "Report in the status bar what Quat IK did to chains after an edit of the bones"
    bl_options = {"INTERNAL"}

    def execute(self, context):
        for line in session.news:
            self.report({"INFO"}, f"Quat IK: {line}")
        session.stats["news_reported"] += len(session.news)
        session.news.clear()
        return {"FINISHED"}


CLASSES = (QUATIK_OT_report_news,)
