"""kiln.autotune (python/kiln/kernel.py, python/src/tune.cpp): its arguments are checked before
anything runs; without a GPU it says so; on a GPU it records a winner that kiln.compile then
compiles, and a second call is answered from the tuning cache."""
import os
import subprocess
import sys

import pytest

import kiln
from kiln import programs

SMALL = {"M": 256, "N": 256, "K": 256}


@pytest.mark.parametrize("bad", [{"finalists": 0}, {"reps": 0}, {"budget_s": -1.0}, {"screen_reps": -1},
                                 {"screen_s": -1.0}, {"max_candidates": -1}])
def test_bad_options_are_refused_with_the_values(bad):
    with pytest.raises(ValueError, match="kiln.autotune: finalists and reps must be at least 1, budget_s, "):
        kiln.autotune(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), SMALL, **bad)


def test_plan_tune_compiles_and_prunes_on_the_cpu():
    # sm_80 with the generated space cut to nothing: the registered variants and the neighbours
    # of the best three, compiled and assembled here, nothing timed.
    r = kiln.plan_tune(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), SMALL, target="sm_80",
                       max_candidates=1)
    assert r["config"] == "" and r["why"].startswith("planned: ")
    assert r["assembled"] == len([c for c in r["candidates"] if c["registers"] > 0]) > 20
    assert r["space"].endswith(" 0 kept") and r["phases"]["compile"] > 0
    assert any(c["origin"].startswith("neighbour of ") for c in r["candidates"])
    assert all(c["us"] is None for c in r["candidates"])


def test_plan_tune_says_why_no_family_runs_a_program():
    rows = kiln.parse(open(os.path.join(os.path.dirname(__file__), "..", "lit", "Inputs",
                                        "gemm_two_outputs.kiln")).read())
    with pytest.raises(kiln.Error, match="kiln tune: no schedule family runs this program: a GEMM with more than "
                                          "one output"):
        kiln.plan_tune(rows, SMALL)
    with pytest.raises(kiln.Error, match="kiln.plan_tune: unknown target 'sm_99'"):
        kiln.plan_tune(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), SMALL, target="sm_99")


def test_without_a_gpu_it_says_so(tmp_path):
    # In a fresh process: this one may have loaded the driver already (the driver is loaded once).
    code = ("import kiln\nfrom kiln import programs\n"
            "try:\n    kiln.autotune(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), {'M': 256, 'N': 256, 'K': 256})\n"
            "except kiln.Error as e:\n    print('kiln.Error:', e)\n")
    env = dict(os.environ, KILN_LIBCUDA=str(tmp_path / "no-such-libcuda.so"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "kiln.Error: error: kiln.autotune needs a GPU, and none is available here: " in out.stdout


@pytest.mark.gpu
def test_tunes_records_and_compile_uses_the_winner(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_TUNE_DIR", str(tmp_path))
    module = programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16)
    dims = {"M": 1024, "N": 480, "K": 352}
    r = kiln.autotune(module, dims, finalists=4, reps=5)
    assert not r["cached"] and r["config"].startswith("strategy=")
    timed = [c for c in r["candidates"] if c["us"] is not None]
    assert 1 <= len(timed) <= 4 and r["us"] == min(c["us"] for c in timed if not c["dropped"])
    assert os.path.isfile(r["cache_file"]) and r["cache_file"].startswith(str(tmp_path))
    again = kiln.autotune(module, dims)
    assert again["cached"] and again["config"] == r["config"]
    k = kiln.compile(module, dims={"M": 1100, "N": 480, "K": 352})  # the same bucket
    assert k.config == r["config"] and k.why.startswith("kiln tune's winner at K=352,M=1024,N=480")
