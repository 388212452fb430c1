"""Every named step of a session script as a pytest item of its own (issue 34).

A session script (``tests/*/sessions/*.py``, run inside Blender) cuts its checks into steps::

    with checks.step("bends toward the pole"):
        ...  # the step's code and its checks.check / near / expect_error calls

The name is a string literal, unique in its script: it is read from the source without
running it and becomes the item's id, slugified (``bends_toward_the_pole``). Every check call
sits inside a step; module-level setup that checks nothing may stay outside, and helper
functions that check (called from steps) stay functions. A loop of checks is one step with
the loop inside it, never a loop around a step. Steps do not nest. A check that applies only
in some Blenders keeps its condition inside the step (a step the script never reaches fails).
The script still ends with ``checks.close()``. ``tests/test_session_steps.py`` holds every
session script of the repository to these rules, without Blender.

A wrapper module makes one item per step; the script runs whole once per pytest session, by
the first of its items that runs (steps build on the state earlier steps left), and each item
passes or fails on its own step's lines::

    from tests.blender.conftest import SESSIONS
    from tests.session_steps import steps_of

    @pytest.mark.bpy
    @pytest.mark.parametrize("step", steps_of(SESSIONS / "pole.py"))
    def test_pole(step, session_steps, run_session_result):
        session_steps.check("pole", step, lambda: run_session_result("pole.py"))

``session_steps.check(key, step, run)`` (fixture in ``tests/conftest.py``): ``run()`` returns the
``SessionResult`` of one session without raising on failure; it is called the first time
``key`` is seen in the pytest session and its output is kept for the other steps. ``key`` names
that one run: the script, its arguments and the Blender it runs in (``"bake_blocks seams"``,
``"bpy-4.2-lts join_separate.py"``); one key belongs to one test module. The item fails
with its step's lines if a check in the step failed, the step raised or an add-on handler
printed "failed unexpectedly" during it; a step the session never reached fails with "not reached" and the end of the session's output; a session that
failed outside every step (after its last step, or a FAIL check outside steps) fails all its
items. ``check`` returns the step's lines, for a wrapper that asserts on what Blender printed
during the step; ``session_steps.run(key, run)`` gives the whole ``StepsRun`` (``.lines_of(step)``,
``.stdout``, ``.result``: the ``SessionResult``, None if ``run()`` raised) to a test of its own,
e.g. one asserting on an operator's report in a step's lines.

The runners, each returning the ``SessionResult`` without checking it (the session runs in the
first item's ``tmp_path``):

* ``run_session_result(script, *args)`` (``tests/blender/conftest.py``): ``SESSIONS / script`` in
  bpy 5.0 with the add-on, ``tmp_path`` as its first argument, as ``run_session`` does;
* ``run_binary_session_result(script, *args)`` (same file): the same in Debian's Blender 3.4 binary;
* ``run_bpy_with_addon_result(script_path, *args)`` and ``run_blender_binary_result(script_path,
  *args)`` (``tests/conftest.py``): any script path, arguments as given (no ``tmp_path`` added);
* ``tests.compat.test_version_matrix.run_in_python(python, script, *args, workdir=..., install=...)``:
  another venv's bpy (4.2, 4.5), as a plain function;
* ``tests.window.conftest.run_in_window(blend, script, *args, workdir=..., addon_zip=...)``: the
  3.4 binary in a window under xvfb, as a plain function.

Parametrizing:

* ``steps_of(path)``: the steps of one script; ``steps_of(path, function="seams")``: only those
  inside the function ``seams`` (a script that runs one part per argument);
* ``steps_of_each(paths)``: ``(script name, step)`` pairs of several scripts, ids
  ``"<script stem>-<step>"``, for ``@pytest.mark.parametrize(("session", "step"), ...)``; stack
  another ``parametrize`` for the Blender (items become version × step) and put both in the key.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import HANDLER_BUG_MARKER, STEP_BEGIN, STEP_END, SUCCESS_MARKER, SessionResult

CHECK_METHODS = frozenset({"check", "near", "expect_error"})
TAIL_LINES = 40  # of the session's output, shown for a step it never reached


class Step(str):
    """A step's name (a plain ``str`` to the test) that knows every step of its script, in
    order: a session that failed after its last step fails each item, not none."""

    script_steps: tuple[str, ...]

    def __new__(cls, name: str, script_steps: Iterable[str] = ()) -> Step:
        step = super().__new__(cls, name)
        step.script_steps = tuple(script_steps)
        return step


def slug(name: str) -> str:
    """A step's name as a pytest id: lower case, runs of anything but letters and digits as ``_``."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


# ---------------------------------------------------------------- reading steps from the source


@dataclass(frozen=True)
class FoundStep:
    name: str | None  # None when the name is not a string literal
    line: int
    function: str | None  # the innermost function the step lies in, None at module level


@dataclass
class ScriptSteps:
    """What the source of a session script says about its steps, and what breaks the rules."""

    path: Path
    steps: list[FoundStep] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    makes_checks: bool = False  # it builds a ``Checks`` or calls check methods: a session script

    def names(self, function: str | None = None) -> list[str]:
        return [s.name for s in self.steps if s.name is not None and (function is None or s.function == function)]


def _is_step(node: ast.AST, checks_names: set[str]) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "step"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in checks_names
    )


def _is_check_method(node: ast.AST, checks_names: set[str]) -> bool:
    """``checks.check`` (``near``, ``expect_error``), not yet called."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr in CHECK_METHODS
        and isinstance(node.value, ast.Name)
        and node.value.id in checks_names
    )


def _is_check(node: ast.AST, checks_names: set[str], aliases: frozenset[str] = frozenset()) -> bool:
    """A call of a check method, directly or by a name it was given (``expect_error = checks.expect_error``)."""
    return isinstance(node, ast.Call) and (
        _is_check_method(node.func, checks_names) or (isinstance(node.func, ast.Name) and node.func.id in aliases)
    )


def _check_aliases(tree: ast.AST, checks_names: set[str]) -> frozenset[str]:
    return frozenset(
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _is_check_method(node.value, checks_names)
        for target in node.targets
        if isinstance(target, ast.Name)
    )


def _checks_names(tree: ast.AST) -> set[str]:
    """``checks`` and any other name a ``Checks(...)`` is assigned to."""
    names = {"checks"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "Checks":
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def read_steps(path: Path) -> ScriptSteps:
    """The steps of the script at ``path`` and every way it breaks the rules of the module docstring."""
    path = Path(path)
    found = ScriptSteps(path)
    tree = ast.parse(path.read_text(), filename=str(path))
    checks_names = _checks_names(tree)
    aliases = _check_aliases(tree, checks_names)
    found.makes_checks = any(
        _is_check(node, checks_names, aliases)
        or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Checks")
        for node in ast.walk(tree)
    )
    holds_steps = {
        node
        for node in ast.walk(tree)
        if isinstance(node, _FUNCTIONS) and any(_is_step(inner, checks_names) for inner in ast.walk(node))
    }

    def visit(node: ast.AST, *, function: str | None, step: str | None, in_loop: bool, strict: bool) -> None:
        # strict: check calls here must lie in a step (module level, or a function holding steps);
        # a helper function without steps may check, since steps call it.
        if isinstance(node, ast.With | ast.AsyncWith):
            steps_here = [item.context_expr for item in node.items if _is_step(item.context_expr, checks_names)]
            if steps_here:
                call = steps_here[0]
                name = None
                if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Constant):
                    name = call.args[0].value if isinstance(call.args[0].value, str) else None
                where = f"{path.name}:{node.lineno}"
                if name is None:
                    found.problems.append(f"{where}: a step's name must be a string literal")
                if step is not None:
                    found.problems.append(f"{where}: step {name!r} lies inside step {step!r} (steps do not nest)")
                if in_loop:
                    found.problems.append(
                        f"{where}: step {name!r} lies in a loop (put the loop inside one step instead)"
                    )
                found.steps.append(FoundStep(name, node.lineno, function))
                for item in node.items:
                    visit(item, function=function, step=step, in_loop=in_loop, strict=strict)
                for child in node.body:
                    visit(child, function=function, step=name or "?", in_loop=in_loop, strict=strict)
                return
        if isinstance(node, _FUNCTIONS):
            name = getattr(node, "name", "<lambda>")
            for child in ast.iter_child_nodes(node):
                visit(child, function=name, step=None, in_loop=False, strict=node in holds_steps)
            return
        if _is_check(node, checks_names, aliases) and step is None and strict:
            called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            found.problems.append(f"{path.name}:{node.lineno}: {called}(...) lies outside every step")
        for child in ast.iter_child_nodes(node):
            visit(child, function=function, step=step, in_loop=in_loop or isinstance(node, _LOOPS), strict=strict)

    visit(tree, function=None, step=None, in_loop=False, strict=True)

    names = [s.name for s in found.steps if s.name is not None]
    for name in sorted({n for n in names if names.count(n) > 1}):
        found.problems.append(f"{path.name}: step {name!r} appears {names.count(name)} times")
    slugs: dict[str, str] = {}
    for name in dict.fromkeys(names):
        if not slug(name):
            found.problems.append(f"{path.name}: step {name!r} has no letter or digit for its id")
        elif slug(name) in slugs:
            found.problems.append(f"{path.name}: steps {slugs[slug(name)]!r} and {name!r} share the id {slug(name)!r}")
        else:
            slugs[slug(name)] = name
    if found.makes_checks and not found.steps:
        found.problems.append(f'{path.name}: no step (wrap its checks in `with checks.step("..."):`)')
    return found


def _script_steps(path: Path, function: str | None) -> list[Step]:
    found = read_steps(path)
    naming = [p for p in found.problems if "name must be" in p or "appears" in p or "share the id" in p]
    if naming:  # items cannot be made; the other problems are tests/test_session_steps.py's to report
        raise ValueError("; ".join(naming))
    names = found.names(function)
    if not names:
        where = f"inside function {function!r} of " if function else ""
        raise ValueError(f"no step {where}{path}")
    return [Step(name, names) for name in names]


def steps_of(path: Path, *, function: str | None = None) -> list:
    """One ``pytest.param`` per step of the script at ``path`` (only those inside the function
    ``function`` if given), id = the step's slug. Raises if there is none, so that a script
    without steps breaks collection instead of making an empty, skipped parametrization."""
    return [pytest.param(step, id=slug(step)) for step in _script_steps(path, function)]


def steps_of_each(paths: Iterable[Path]) -> list:
    """``(script name, step)`` params for several scripts, ids ``"<script stem>-<step slug>"``."""
    return [
        pytest.param(path.name, step, id=f"{path.stem}-{slug(step)}")
        for path in map(Path, paths)
        for step in _script_steps(path, None)
    ]


# ---------------------------------------------------------------- reading a session's output


@dataclass
class StepLines:
    name: str
    lines: list[str]
    ended: bool = False
    passed: bool = False  # its end line said "ok"
    runs: int = 1

    @property
    def failed(self) -> bool:
        handler_bug = any(HANDLER_BUG_MARKER in line for line in self.lines)
        return handler_bug or not (self.ended and self.passed and self.runs == 1)


@dataclass
class StepsRun:
    """One session's output read step by step."""

    key: str
    result: SessionResult | None  # None when ``run()`` itself raised
    error: str = ""  # why there is no result
    steps: dict[str, StepLines] = field(default_factory=dict)
    outside: list[str] = field(default_factory=list)  # stdout lines outside every step

    @classmethod
    def read(cls, key: str, result: SessionResult) -> StepsRun:
        run = cls(key, result)
        current: StepLines | None = None
        for line in result.stdout.splitlines():
            if line.startswith(STEP_BEGIN):
                name = line[len(STEP_BEGIN) :]
                if name in run.steps:
                    current = run.steps[name]
                    current.runs += 1
                    current.lines.append(line)
                else:
                    current = run.steps[name] = StepLines(name, [line])
            elif line.startswith(STEP_END) and current is not None:
                current.lines.append(line)
                current.ended = True
                current.passed = current.passed if current.runs > 1 else line.endswith(" ok")
                current = None
            elif current is not None:
                current.lines.append(line)
            else:
                run.outside.append(line)
        return run

    def lines_of(self, step: str) -> str:
        return "\n".join(self.steps[step].lines) if step in self.steps else ""

    @property
    def stdout(self) -> str:
        """The session's whole output; fails the test if the session could not run."""
        if self.result is None:
            pytest.fail(f"{self.key}: {self.ending()}", pytrace=False)
        return self.result.stdout

    def failed_outside_steps(self, expected: Iterable[str]) -> bool:
        """The session failed and neither a step of it nor a step it never reached explains why."""
        if self.result is None or self.result.succeeded:
            return False
        if any(s.failed for s in self.steps.values()):
            return False
        return all(name in self.steps for name in expected)

    def ending(self) -> str:
        """How the session ended, with the tail of its output."""
        result = self.result
        if result is None:
            return f"the session could not run: {self.error}"
        if result.stalled:
            how = result.stalled
        elif result.succeeded:
            how = "the session ended cleanly"
        else:
            how = (
                f"the session failed (exit {result.returncode}, success marker "
                f"{'present' if SUCCESS_MARKER in result.stdout else 'missing'}"
                f"{', a handler failed unexpectedly' if HANDLER_BUG_MARKER in result.stdout else ''})"
            )
        return (
            f"{how}\ncommand: {' '.join(result.command)}\n"
            f"--- stdout (last {TAIL_LINES} lines) ---\n{_tail(result.stdout)}\n"
            f"--- stderr (last {TAIL_LINES} lines) ---\n{_tail(result.stderr)}"
        )


def _tail(text: str, n_lines: int = TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-n_lines:])


def step_failure(run: StepsRun, step: str) -> str | None:
    """Why the item of ``step`` fails, or None when it passes."""
    if run.result is None:
        return f"{run.key}: {run.ending()}"
    expected = getattr(step, "script_steps", ()) or (step,)
    record = run.steps.get(step)
    if record is None:
        return f"{run.key}: step {step!r} not reached: {run.ending()}"
    lines = "\n".join(record.lines)
    if record.runs > 1:
        return f"{run.key}: step {step!r} ran {record.runs} times:\n{lines}"
    if not record.ended:
        return f"{run.key}: step {step!r} began but never ended:\n{lines}\n\n{run.ending()}"
    if not record.passed:
        stderr = _tail(run.result.stderr, 20)
        return f"{run.key}: step {step!r} failed:\n{lines}" + (
            f"\n--- stderr of the session (last 20 lines) ---\n{stderr}" if stderr else ""
        )
    if any(HANDLER_BUG_MARKER in line for line in record.lines):
        return f"{run.key}: a handler of the add-on failed unexpectedly during step {step!r}:\n{lines}"
    if run.failed_outside_steps(expected):
        outside_fails = [line for line in run.outside if line.startswith("  FAIL ")]
        return (
            f"{run.key}: every step passed but the session failed outside its steps"
            + (":\n" + "\n".join(outside_fails) if outside_fails else "")
            + f"\n\n{run.ending()}"
        )
    return None


class SessionSteps:
    """The runs of one pytest session, by key (see the module docstring)."""

    def __init__(self) -> None:
        self.runs: dict[str, StepsRun] = {}
        self.owners: dict[str, str] = {}  # key -> the test module that runs it

    def run(self, key: str, run: Callable[[], SessionResult], *, owner: str = "") -> StepsRun:
        if owner:
            first = self.owners.setdefault(key, owner)
            if first != owner:
                pytest.fail(f"session key {key!r} is used by {first} and {owner}: give each run its own key")
        if key not in self.runs:
            try:
                self.runs[key] = StepsRun.read(key, run())
            except Exception as error:  # e.g. a venv or binary that is missing: every step says so
                self.runs[key] = StepsRun(key, None, error=f"{type(error).__name__}: {error}")
        return self.runs[key]

    def check(self, key: str, step: str, run: Callable[[], SessionResult], *, owner: str = "") -> str:
        steps_run = self.run(key, run, owner=owner)
        lines = steps_run.lines_of(step)
        print(lines)  # shown with -s, or on failure
        failure = step_failure(steps_run, step)
        if failure is not None:
            pytest.fail(failure, pytrace=False)
        return lines


class BoundSessionSteps:
    """``SessionSteps`` as one test sees it: a key used by two test modules is refused (a copied
    key would run one script and report it as another)."""

    def __init__(self, steps: SessionSteps, owner: str) -> None:
        self._steps, self._owner = steps, owner

    def check(self, key: str, step: str, run: Callable[[], SessionResult]) -> str:
        return self._steps.check(key, step, run, owner=self._owner)

    def run(self, key: str, run: Callable[[], SessionResult]) -> StepsRun:
        return self._steps.run(key, run, owner=self._owner)
