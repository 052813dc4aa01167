"""The DSL (kiln.Program, @kiln.kernel) and text IR in and out (python/src/dsl.cpp, kernel.py)."""
import pytest

import kiln


def bias_gelu(p):
    M, N, K = p.dims("M", "N", "K")
    A = p.input("A", kiln.bf16, [M, K])
    B = p.input("B", kiln.bf16, [K, N])
    bias = p.input("bias", kiln.f32, [N])
    C = p.output("C", kiln.bf16, [M, N])

    def body(m, n):
        acc = p.reduce(K, p.zeros(kiln.f32, [m, n]), lambda k, acc: kiln.dot(A[m, k], B[k, n], acc))
        C[m, n] = kiln.cast(kiln.bf16, kiln.gelu_tanh(acc + bias[n]))
    p.tile([M, N], body)


def test_builds_the_same_program_as_the_cpp_dsl():
    p = kiln.Program("gemm_bias_gelu")
    bias_gelu(p)
    text = p.finish().text
    # The C++ example of README / examples/ (kiln examples --print gemm_bias_gelu), op for op.
    for line in ['tile.program() {sym_name = "gemm_bias_gelu", dims = ["M", "N", "K"]}',
                 '%bias = tile.input() {name = "bias"} : tensor<f32, [N]>',
                 "tile.reduce(%0) {dim = \"K\"} : tile<f32, [M, N]>", "tile.dot(", "tile.broadcast(", "tile.add(",
                 "tile.gelu_tanh(", "tile.cast(", "tile.store(%C, %m, %n"]:
        assert line in text, line


def test_text_round_trips():
    module = kiln.kernel(bias_gelu)
    again = kiln.parse(module.text)
    assert again.text == module.text
    assert again.name == "bias_gelu" and again.dims == ["M", "N", "K"]
    assert [a["name"] for a in again.arguments()] == ["A", "B", "bias", "C"]
    assert again.arguments()[2]["shape"] == ["N"]


def test_a_mistake_is_a_kiln_error_with_the_builders_sentence():
    p = kiln.Program("bad")
    M, N, K = p.dims("M", "N", "K")
    A = p.input("A", kiln.bf16, [M, K])
    B = p.input("B", kiln.f16, [K, N])
    C = p.output("C", kiln.bf16, [M, N])

    def body(m, n):
        acc = p.reduce(K, p.zeros(kiln.f32, [m, n]), lambda k, acc: kiln.dot(A[m, k], B[k, n], acc))
        C[m, n] = kiln.cast(kiln.bf16, acc)
    with pytest.raises(kiln.Error) as e:
        p.tile([M, N], body)
    assert "bf16" in str(e.value) and "f16" in str(e.value)
    assert "dsl.cpp" not in str(e.value)  # the traceback, not the bindings, says where


def test_parse_errors_point_into_the_text():
    with pytest.raises(kiln.Error, match=r"^prog.kiln:1:\d+: error: "):
        kiln.parse("tile.program() {", file="prog.kiln")
