"""The environment: a seed out of every generator's range, a switch that is no
switch, a results directory that is a file: each a ``ValueError`` naming the variable, raised
where it is read (:mod:`interop.env`)."""
from __future__ import annotations

import pytest
import torch

from interop.env import SEED_MAX, read


# --------------------------------------------------------------------------------------
# INTEROP_SEED
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw", ["99999999999999999999999", str(SEED_MAX + 1), "-1", "1.5", "9" * 5000])
def test_a_seed_out_of_range_names_the_variable(monkeypatch, raw):
    # before: 99999999999999999999999 was accepted and failed inside torch, naming no variable
    monkeypatch.setenv("INTEROP_SEED", raw)
    with pytest.raises(ValueError, match=rf"environment variable INTEROP_SEED=.*expected an integer >= 0 and "
                                         rf"<= {SEED_MAX}$"):
        read("INTEROP_SEED", default=7)


@pytest.mark.parametrize("raw, seed", [("", 7), ("0", 0), (str(SEED_MAX), SEED_MAX), (" 42 ", 42)])
def test_a_seed_in_range_is_taken_and_every_generator_takes_it(monkeypatch, raw, seed):
    import random

    import numpy as np

    monkeypatch.setenv("INTEROP_SEED", raw)
    assert read("INTEROP_SEED", default=7) == seed
    torch.Generator().manual_seed(seed)
    np.random.default_rng(seed)
    np.random.RandomState(seed)  # the narrowest: 0 .. 2**32 - 1
    random.Random(seed)


# --------------------------------------------------------------------------------------
# INTEROP_TIMING_PASS: the one switch parser, on the environment given
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, on", [("off", False), ("FALSE", False), ("no", False), ("0", False), (" Off ", False),
                                     ("1", True), ("on", True), ("YES", True), ("", True)])
def test_the_timing_pass_switch_reads_every_spelling(raw, on):
    assert read("INTEROP_TIMING_PASS", {"INTEROP_TIMING_PASS": raw}) is on


def test_a_timing_pass_switch_that_is_no_switch_names_the_variable(monkeypatch):
    # before: INTEROP_TIMING_PASS=banana (or off, FALSE) still ran the timing pass
    monkeypatch.setenv("INTEROP_TIMING_PASS", "0")  # the mapping given wins over os.environ
    with pytest.raises(ValueError, match=r"environment variable INTEROP_TIMING_PASS='banana': expected one of 1, "
                                         r"true, yes, on, 0, false, no, off"):
        read("INTEROP_TIMING_PASS", {"INTEROP_TIMING_PASS": "banana"})
    assert read("INTEROP_TIMING_PASS") is False  # os.environ when none is given


# --------------------------------------------------------------------------------------
# INTEROP_RESULTS_DIR
# --------------------------------------------------------------------------------------
def test_a_results_dir_that_is_a_file_names_the_variable(monkeypatch, tmp_path):
    # before: every test failed with an unnamed NotADirectoryError / FileExistsError
    afile = tmp_path / "results.txt"
    afile.write_text("x")
    monkeypatch.setenv("INTEROP_RESULTS_DIR", str(afile))
    with pytest.raises(ValueError, match=r"environment variable INTEROP_RESULTS_DIR='.*results\.txt': not a "
                                         r"directory"):
        read("INTEROP_RESULTS_DIR")
    monkeypatch.setenv("INTEROP_RESULTS_DIR", str(afile / "run" / "x"))
    with pytest.raises(ValueError, match=r"INTEROP_RESULTS_DIR='.*': lies under '.*results\.txt', which is not a "
                                         r"directory"):
        read("INTEROP_RESULTS_DIR")
    monkeypatch.setenv("INTEROP_RESULTS_DIR", str(tmp_path / "dangling"))
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ValueError, match=r"INTEROP_RESULTS_DIR=.*dangling'"):
        read("INTEROP_RESULTS_DIR")


def test_a_results_dir_that_is_or_can_become_a_directory_is_taken(monkeypatch, tmp_path):
    for path in (tmp_path, tmp_path / "new" / "run"):
        monkeypatch.setenv("INTEROP_RESULTS_DIR", str(path))
        assert read("INTEROP_RESULTS_DIR") == path
    assert not (tmp_path / "new").exists()  # nothing created by reading
    monkeypatch.setenv("INTEROP_RESULTS_DIR", " ")
    assert read("INTEROP_RESULTS_DIR") is None
