"""The session scripts' named steps (tests/session_steps.py), without Blender: every session
script of the repository keeps the rules of its steps, and a session's output is read into the
right verdict for each step."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.helpers import HANDLER_BUG_MARKER, REPO_ROOT, STEP_BEGIN, STEP_END, SUCCESS_MARKER, SessionResult
from tests.session_steps import SessionSteps, Step, read_steps, slug, step_failure, steps_of, steps_of_each

SESSION_SCRIPTS = sorted(
    path
    for path in (REPO_ROOT / "tests").glob("*/sessions/*.py")
    if path.name != "common.py" and read_steps(path).makes_checks
)


def test_session_scripts_are_found() -> None:
    # The glob and read_steps' notion of a session script: the known ones are among them.
    names = {path.relative_to(REPO_ROOT).as_posix() for path in SESSION_SCRIPTS}
    assert {"tests/blender/sessions/pole.py", "tests/compat/sessions/smoke.py"} <= names, names
    assert "tests/blender/sessions/limit_rig.py" not in names  # a helper module: builds no Checks


@pytest.mark.parametrize("path", SESSION_SCRIPTS, ids=lambda path: f"{path.parent.parent.name}-{path.stem}")
def test_every_check_of_a_session_script_lies_in_one_named_step(path: Path) -> None:
    found = read_steps(path)
    assert found.problems == [], "\n".join(found.problems)
    assert found.steps


# ---------------------------------------------------------------- reading the source


def steps_in(tmp_path: Path, source: str):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source))
    return read_steps(path)


def test_names_ids_and_the_functions_steps_lie_in(tmp_path: Path) -> None:
    found = steps_in(
        tmp_path,
        """
        checks = Checks("t")
        setup = 1

        def helper(checks):
            checks.check("helpers check, called from steps", True)

        def seams():
            with checks.step("keys every frame"):
                checks.check("a", True)

        with checks.step("Bends toward the pole (90°)"):
            for i in range(3):
                checks.near("b", i, i, 0)
        checks.close()
        """,
    )
    assert found.problems == []
    assert [(s.name, s.function) for s in found.steps] == [
        ("keys every frame", "seams"),
        ("Bends toward the pole (90°)", None),
    ]
    assert slug("Bends toward the pole (90°)") == "bends_toward_the_pole_90"
    params = steps_of(found.path)
    assert [p.id for p in params] == ["keys_every_frame", "bends_toward_the_pole_90"]
    assert [p.values[0].script_steps for p in params] == [("keys every frame", "Bends toward the pole (90°)")] * 2
    assert [p.values for p in steps_of(found.path, function="seams")] == [("keys every frame",)]
    ((pair,),) = [[p for p in steps_of_each([found.path]) if p.id == "script-keys_every_frame"]]
    assert pair.values == ("script.py", "keys every frame")


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ('checks = Checks("t")\nchecks.check("a", True)\n', "no step"),
        ('checks = Checks("t")\nwith checks.step("s"):\n    pass\nchecks.check("a", True)\n', "outside every step"),
        ('checks = Checks("t")\nwith checks.step(NAME):\n    checks.check("a", True)\n', "string literal"),
        ('checks = Checks("t")\nwith checks.step(f"s{1}"):\n    checks.check("a", True)\n', "string literal"),
        ('checks = Checks("t")\nwith checks.step("s"):\n    pass\nwith checks.step("s"):\n    pass\n', "2 times"),
        (
            'checks = Checks("t")\nwith checks.step("a b"):\n    pass\nwith checks.step("a-b"):\n    pass\n',
            "share the id",
        ),
        ('checks = Checks("t")\nwith checks.step("a"):\n    with checks.step("b"):\n        pass\n', "do not nest"),
        ('checks = Checks("t")\nfor i in range(2):\n    with checks.step("a"):\n        pass\n', "in a loop"),
        (
            'checks = Checks("t")\ndef main():\n    with checks.step("a"):\n        pass\n    checks.check("x", 1)\n',
            "outside",
        ),
        ('c = Checks("t")\nwith c.step("a"):\n    pass\nc.near("x", 1, 1, 0)\n', "outside every step"),
        (
            'checks = Checks("t")\nfail = checks.expect_error\nwith checks.step("a"):\n    fail("y")\nfail("x")\n',
            "fail(...)",
        ),
    ],
    ids=[
        "no_step",
        "check_after_the_steps",
        "name_is_a_variable",
        "name_is_an_f_string",
        "name_twice",
        "ids_collide",
        "nested",
        "step_in_a_loop",
        "check_outside_steps_in_a_function_that_holds_steps",
        "checks_by_another_name",
        "a_check_method_by_another_name",
    ],
)
def test_each_broken_rule_is_found(tmp_path: Path, source: str, problem: str) -> None:
    found = steps_in(tmp_path, source)
    assert any(problem in p for p in found.problems), found.problems


def test_a_script_without_steps_breaks_collection_rather_than_skipping(tmp_path: Path) -> None:
    found = steps_in(tmp_path, 'checks = Checks("t")\nchecks.check("a", True)\n')
    with pytest.raises(ValueError, match="no step"):
        steps_of(found.path)


# ---------------------------------------------------------------- reading the output


def session(*stdout_lines: str, returncode: int = 0, stderr: str = "", stalled: str = "") -> SessionResult:
    return SessionResult(("blender", "script.py"), returncode, "\n".join(stdout_lines) + "\n", stderr, stalled)


def step_lines(name: str, *lines: str, verdict: str | None = "ok") -> list[str]:
    return [f"{STEP_BEGIN}{name}", *lines, *([f"{STEP_END}{name} {verdict}"] if verdict else [])]


STEPS = ("first", "second", "third")


def verdicts(result: SessionResult, steps=STEPS) -> dict[str, str | None]:
    runs = SessionSteps()
    run = runs.run("key", lambda: result)
    return {name: step_failure(run, Step(name, steps)) for name in steps}


def test_each_step_passes_or_fails_on_its_own_lines() -> None:
    result = session(
        "=== title",
        *step_lines("first", "  ok   a"),
        *step_lines("second", "  FAIL b: 3 vs 4", verdict="FAIL"),
        *step_lines("third", "  ok   c"),
        "=== title: 2 passed, 1 failed",
        returncode=1,
        stderr="AssertionError: 1 check(s) failed",
    )
    found = verdicts(result)
    assert found["first"] is None and found["third"] is None
    assert "FAIL b: 3 vs 4" in found["second"] and "  ok   a" not in found["second"]


def test_a_step_never_reached_fails_and_shows_where_the_session_stopped() -> None:
    result = session(*step_lines("first"), "Segmentation fault", returncode=139)
    found = verdicts(result)
    assert found["first"] is None
    for name in ("second", "third"):
        assert "not reached" in found[name] and "Segmentation fault" in found[name] and "exit 139" in found[name]


def test_a_step_the_session_stopped_in_fails_with_its_lines() -> None:
    stalled = "the session printed nothing for 300 s and was stopped"
    result = session(*step_lines("first"), *step_lines("second", "  ok   a", verdict=None), stalled=stalled)
    found = verdicts(result)
    assert found["first"] is None
    assert "began but never ended" in found["second"] and "  ok   a" in found["second"] and stalled in found["second"]
    assert "not reached" in found["third"]


def test_a_session_that_fails_after_its_last_step_fails_every_step() -> None:
    traceback = "Traceback (most recent call last):\nNameError: name 'x' is not defined"
    result = session(*[line for name in STEPS for line in step_lines(name)], returncode=1, stderr=traceback)
    assert all(
        "failed outside its steps" in failure and "NameError" in failure for failure in verdicts(result).values()
    )


def test_a_failed_check_outside_the_steps_fails_every_step() -> None:
    result = session(*step_lines("first"), "  FAIL stray: 1", *step_lines("second"), *step_lines("third"), returncode=1)
    assert all("FAIL stray: 1" in failure for failure in verdicts(result).values())


def test_a_handler_bug_fails_the_step_it_printed_in() -> None:
    bug = f"Quat IK: the frame handler {HANDLER_BUG_MARKER}: ZeroDivisionError"
    result = session(*step_lines("first"), *step_lines("second", bug), *step_lines("third"), SUCCESS_MARKER)
    found = verdicts(result)
    assert found["first"] is None and found["third"] is None
    assert "handler" in found["second"] and "ZeroDivisionError" in found["second"]


def test_a_clean_session_passes_every_step_and_runs_once() -> None:
    calls = []

    def run() -> SessionResult:
        calls.append(1)
        return session(*[line for name in STEPS for line in step_lines(name)], SUCCESS_MARKER)

    runs = SessionSteps()
    for name in STEPS:
        assert runs.check("key", Step(name, STEPS), run) == f"{STEP_BEGIN}{name}\n{STEP_END}{name} ok"
    assert len(calls) == 1


def test_a_step_that_ran_twice_fails() -> None:
    result = session(*step_lines("first"), *step_lines("first"), *step_lines("second"), *step_lines("third"))
    assert "ran 2 times" in verdicts(result)["first"]


def test_a_run_that_raises_fails_each_step_with_its_error() -> None:
    def run() -> SessionResult:
        raise AssertionError(".venv-bpy42/bin/python not found: run `make compat-venvs`")

    runs = SessionSteps()
    for name in STEPS:
        with pytest.raises(pytest.fail.Exception, match="make compat-venvs"):
            runs.check("key", Step(name, STEPS), run)


def test_a_key_used_by_two_test_modules_is_refused() -> None:
    runs = SessionSteps()
    result = session(*step_lines("first"), SUCCESS_MARKER)
    runs.check("key", Step("first", ("first",)), lambda: result, owner="tests.blender.test_a")
    with pytest.raises(pytest.fail.Exception, match=r"tests\.blender\.test_a and tests\.blender\.test_b"):
        runs.check("key", Step("first", ("first",)), lambda: result, owner="tests.blender.test_b")
