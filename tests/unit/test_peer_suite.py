"""The peer-suite harness's judgement (testing/peer_suite.py; CI runs the suite itself): a test the
real Hindsight passes and memwarden fails is a failure unless listed with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.peer_suite import MEMWARDEN, Outcome, judge, read_differences, read_report, table

PASS, FAIL = Outcome("passed"), Outcome("failed", "AssertionError: assert 0 == 2")


def results(ours: Outcome, theirs: Outcome = PASS) -> dict[str, dict[str, Outcome]]:
    return {"hindsight": {"T::t": theirs}, "self-hosted": {"T::t": ours}, "in-front": {"T::t": PASS}}


def test_a_run_where_hindsight_itself_passes_too_little_is_broken() -> None:
    assert judge(results(PASS), {}).broken  # one test, no examples: not a real run
    many = {f"T::t{i}": PASS for i in range(30)} | {f"example:e{i}": PASS for i in range(12)}
    assert judge({"hindsight": many, "self-hosted": many, "in-front": many}, {}).broken == []


def test_a_difference_fails_unless_listed_for_that_mode() -> None:
    assert judge(results(FAIL), {}).unexplained == ["T::t (self-hosted): AssertionError: assert 0 == 2"]
    assert judge(results(FAIL), {("T::t", "self-hosted"): "noise"}).unexplained == []
    assert judge(results(FAIL), {("T::t", "in-front"): "noise"}).unexplained != []
    assert judge(results(FAIL, theirs=FAIL), {}).unexplained == []  # Hindsight fails it too


def test_a_listed_difference_that_passes_is_reported_stale() -> None:
    assert judge(results(PASS), {("T::t", "self-hosted"): "noise"}).stale == ["T::t (self-hosted)"]


def test_the_table_gives_each_result_and_reason() -> None:
    text = table(results(FAIL), {("T::t", "self-hosted"): "its content states no fact"}, "2026-12-04")
    assert "| `T::t` | pass | **fail** | pass | its content states no fact |" in text
    assert "| **passed** | **1** | **0** | **1** | |" in text


def test_the_differences_file_is_well_formed() -> None:
    listed = read_differences()
    assert listed, "testing/peer_differences.toml lists nothing"
    assert {mode for _, mode in listed} <= set(MEMWARDEN)
    assert all(len(reason) > 40 for reason in listed.values())


def test_a_junit_report_is_read_with_set_up_and_teardown_failures(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text(
        '<testsuites><testsuite><testcase classname="tests.test_main_operations.TestA" name="test_ok"/>'
        '<testcase classname="tests.test_main_operations.TestA" name="test_td">'
        '<error message="failed on teardown with &quot;RuntimeError: at /home/me/x/y.py&quot;"/></testcase>'
        '<testcase classname="tests.test_x" name="test_skip"><skipped message="no"/></testcase>'
        "</testsuite></testsuites>"
    )
    got = read_report(report)
    assert got["TestA::test_ok"] == PASS
    assert got["TestA::test_td"].status == "failed"
    assert "/home/me" not in got["TestA::test_td"].message  # no machine's paths in the table
    assert got["test_x::test_skip"].status == "skipped"


@pytest.mark.parametrize("mode", ["both", ""])
def test_an_unknown_mode_in_the_differences_file_is_refused(tmp_path: Path, mode: str) -> None:
    bad = tmp_path / "d.toml"
    bad.write_text(f'[[difference]]\ntest = "T::t"\nmodes = ["{mode}"]\nreason = "x"\n')
    with pytest.raises(ValueError, match="unknown mode"):
        read_differences(bad)
