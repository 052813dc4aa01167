"""Memory-bound programs in the Python DSL (p.span, reductions along a dim, iota, comparisons,
where, math): they build the C++ examples' programs, interpret through numpy, and compile for the
rowwise family's pick (python/src/dsl.cpp, kiln/programs.py)."""
import os
import shutil
import subprocess
from math import erf

import numpy as np
import pytest

import kiln
from kiln import programs
from test_interpret import bf16


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def _cpp_example(name):
    """The text of the C++ example `name` (kiln examples --print), or a skip where no tool is built."""
    tool = os.environ.get("KILN_TOOL") or shutil.which("kiln")
    if not tool:
        pytest.skip("no kiln tool to print the C++ examples (ctest sets KILN_TOOL)")
    return subprocess.run([tool, "examples", "--print", name], check=True, capture_output=True, text=True).stdout


def _ops(text):
    """The program's lines, without the tool's heading comment."""
    return [line for line in text.splitlines() if line.strip() and not line.startswith("//")]


@pytest.mark.parametrize("build, example", [(programs.softmax_program, "softmax"),
                                            (programs.cross_entropy_program, "cross_entropy")])
def test_builds_the_cpp_examples_program(build, example):
    assert _ops(build().text) == _ops(_cpp_example(example))


def test_softmax_matches_numpy(rng):
    x = rng.standard_normal((6, 40)) * 3
    y = kiln.interpret(programs.softmax_program(), X=x)["Y"]
    e = np.exp(bf16(x) - bf16(x).max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(y, want, rtol=8e-3, atol=1e-6)  # a bf16 output: 8 mantissa bits
    np.testing.assert_array_equal(y, bf16(y))                  # and it is stored as bf16


def test_cross_entropy_picks_the_labels_logit(rng):
    x = rng.standard_normal((5, 33))
    labels = np.array([0, 32, 7, -1, 33])  # the last two are outside [0, V): they pick nothing
    loss = kiln.interpret(programs.cross_entropy_program(), X=x, labels=labels)["loss"]
    xb = bf16(x)
    lse = np.log(np.exp(xb).sum(axis=1))
    picked = np.array([xb[i, l] if 0 <= l < 33 else 0.0 for i, l in enumerate(labels)])
    np.testing.assert_allclose(loss, lse - picked, rtol=1e-5, atol=1e-5)  # f32 math, f32 out


def test_elementwise_math_and_comparisons(rng):
    p = kiln.Program("mix")
    M, N = p.dims("M", "N")
    X = p.input("X", kiln.f32, [M, N])
    Y = p.output("Y", kiln.f32, [M, N])

    def body(m, n):
        x = X[m, n]
        a = kiln.where(x > 0.0, kiln.sqrt(x) + kiln.rsqrt(x + 1.0), kiln.tanh(x) * kiln.erf(x))
        Y[m, n] = kiln.where(x <= -1.0, kiln.exp2(x) + kiln.log(-x), a) + x ** 2.0
    p.tile([M, N], body)
    x = rng.standard_normal((4, 24)) * 2
    x32 = x.astype(np.float32).astype(np.float64)
    pos = np.sqrt(np.maximum(x32, 0)) + 1 / np.sqrt(np.abs(x32) + 1)
    neg = np.tanh(x32) * np.vectorize(erf)(x32)
    low = np.exp2(x32) + np.log(np.abs(x32))
    want = np.where(x32 <= -1, low, np.where(x32 > 0, pos, neg)) + x32 ** 2
    np.testing.assert_allclose(kiln.interpret(p.finish(), X=x)["Y"], want, rtol=1e-5, atol=1e-5)


def test_a_reduction_along_a_split_dim_is_a_kiln_error():
    p = kiln.Program("bad_sum")
    M, N = p.dims("M", "N")
    X = p.input("X", kiln.f32, [M, N])
    Y = p.output("Y", kiln.f32, [M])

    def body(m, n):
        Y[m] = X[m, n].sum(N)
    with pytest.raises(kiln.Error, match="span the whole dim with tile.span"):
        p.tile([M, N], body)
        p.finish()


def test_softmax_compiles_for_the_rowwise_pick():
    module = programs.softmax_program()
    pick = kiln.select(module, "sm_90a", {"M": 4096, "N": 4096})
    assert pick["family"] == "rowwise" and pick["variant"] in pick["why"]
    k = kiln.compile(module, target="sm_90a", dims={"M": 4096, "N": 4096})
    assert k.config == pick["config"] and k.config.startswith("strategy=rowwise")
    assert ".target sm_90a" in k.ptx and k.cubin[:4] == b"\x7fELF"
    assert k.resources["spill_store_bytes"] == 0
    assert [p["name"] for p in k.launch["params"] if p["kind"] == "pointer"] == ["X", "Y"]
    # Without dims: the rowwise defaults, not a GEMM schedule (which cannot lower it).
    assert kiln.compile(module, target="sm_90a").config.startswith("strategy=rowwise")
