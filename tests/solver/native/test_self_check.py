"""The kernel's self-check at load: stored answers that stay numpy's, and a failure that means numpy."""

from __future__ import annotations

import json

import numpy as np

from quat_ik_addon.solver.native import library, self_check

STORED_MATCH = 1e-12  # the stored answers are numpy's own, to rounding


def test_the_stored_answers_are_what_numpy_answers_today():
    stored = json.loads(self_check.ANSWERS.read_text())
    found = self_check.numpy_answers()
    assert stored.keys() == found.keys()
    for name, parts in found.items():
        if name == self_check.BODY:
            for part, values in parts.items():
                assert np.allclose(values, stored[name][part], rtol=0, atol=STORED_MATCH), (
                    f"{name} {part}: regenerate with python -m quat_ik_addon.solver.native.self_check"
                )
            continue
        assert np.allclose(parts["clamped"], stored[name]["clamped"], rtol=0, atol=STORED_MATCH), name
        for method, rotations in parts["solved"].items():
            assert np.allclose(np.abs(rotations), np.abs(stored[name]["solved"][method]), rtol=0, atol=STORED_MATCH), (
                f"{name} {method}: regenerate with python -m quat_ik_addon.solver.native.self_check"
            )


def test_the_built_kernel_passes_its_self_check(kernel):
    assert self_check.check(kernel) is None


def test_a_body_stage_answering_otherwise_is_refused(kernel, tmp_path, monkeypatch):
    stored = json.loads(self_check.ANSWERS.read_text())
    stored[self_check.BODY]["stretch"][0][2] += 1e-3  # as if the kernel's body stage had drifted
    drifted = tmp_path / "self_check.json"
    drifted.write_text(json.dumps(stored))
    monkeypatch.setattr(self_check, "ANSWERS", drifted)
    assert self_check.check(kernel) == "upper_body: a body stage's stretch differ from numpy's by 0.001"


def test_a_kernel_answering_otherwise_is_refused_and_numpy_runs(kernel, tmp_path, monkeypatch):
    stored = json.loads(self_check.ANSWERS.read_text())
    stored["arm3"]["solved"]["dls"][1][0][0] += 1e-3  # as if the kernel's DLS had drifted
    drifted = tmp_path / "self_check.json"
    drifted.write_text(json.dumps(stored))
    monkeypatch.setattr(self_check, "ANSWERS", drifted)
    assert self_check.check(kernel) == "arm3: dls solves differ from numpy's by 0.001"
    library.reset()
    try:
        loaded, status = library.load()
        assert loaded is None and not status.active
        assert "self-check failed: arm3: dls solves differ" in status.describe()
    finally:
        monkeypatch.undo()
        library.reset()
    assert library.load()[0] is not None
