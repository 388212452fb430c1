"""Every panel, UI list, menu entry and operator dialog draws without an error and names only
what exists (see sessions/draw_everything.py): the parts a window test never opens."""

import pytest

pytestmark = pytest.mark.bpy


def test_every_draw_function_draws_and_names_only_what_exists(run_session):
    run_session("draw_everything.py")
