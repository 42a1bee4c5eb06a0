#!/usr/bin/env python3
"""Writes kernels_templates/tilejit/wgmma_ops.cuh: one wrapper per wgmma shape tilejit uses.

A wgmma.mma_async names every accumulator register of the warpgroup's 64 x N tile (N / 2 per thread),
so each shape's inline PTX spells out N / 2 operands; this script writes them instead of a person.
Run it from the repository root after changing SHAPES; the output is checked in.
"""
SHAPES = [16, 32, 64, 128, 192, 256]  # N of m64nNk16 (f16, bf16), m64nNk8 (tf32), m64nNk32 (fp8); 16, 32 for swapped skinny GEMMs
# (wrapper name, A's PTX type, B's PTX type, K of one instruction)
TYPES = [("bf16", "bf16", "bf16", 16), ("f16", "f16", "f16", 16), ("tf32", "tf32", "tf32", 8)]
# The 8-bit floats, A and B each e4m3 or e5m2 (Hopper's FP8 GEMMs mix them: e4m3 forward, e5m2 gradients).
FP8 = ["e4m3", "e5m2"]
TYPES += [(a if a == b else f"{a}_{b}", a, b, 32) for a in FP8 for b in FP8]


def wrapper(n, name, a_type, b_type, k):
    regs = n // 2
    acc = ", ".join(f"%{i}" for i in range(regs))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    a, b, s = regs, regs + 1, regs + 2
    # f16/bf16 take transpose immediates (0: K-major, 1: M- or N-major); tf32 and the 8-bit floats
    # have none and read K-major operands only.
    if k == 16:
        tail, imms, params = f"p, 1, 1, %{regs + 3}, %{regs + 4}", ', "n"(TransA), "n"(TransB)', "template <int TransA, int TransB> "
    else:
        tail, imms, params = "p, 1, 1", "", "template <int TransA, int TransB> "
    what = "tf32" if k == 8 else "8-bit float"
    check = "" if k == 16 else f'    static_assert(TransA == 0 && TransB == 0, "{what} wgmma reads K-major operands only");\n'
    # tf32 also reads A from registers (an M-major A loaded from shared memory by the consumer): the
    # m64k8 fragment of the warp's 16 rows, a[0..3] = (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)
    # with g = lane / 4, t = lane % 4. wgmma reads them asynchronously: they must stay unchanged until
    # the group's wgmma.wait_group.
    registers_a = ""
    if name == "tf32":
        ra, rb, rs = regs, regs + 4, regs + 5
        registers_a = (
            f"  __device__ __forceinline__ static void run_registers_a(float (&d)[{regs}], const unsigned (&a)[4], unsigned long long desc_b, int scale_d) {{\n"
            f"    asm volatile(\n"
            f"        \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{rs}, 0;\\n\"\n"
            f"        \"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.tf32.tf32 {{{acc}}}, {{%{ra}, %{ra + 1}, %{ra + 2}, %{ra + 3}}}, %{rb}, p, 1, 1;\\n}}\\n\"\n"
            f"        : {outs}\n"
            f"        : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc_b), \"r\"(scale_d));\n"
            f"  }}\n"
        )
    return (
        f"template <> struct wgmma_op<{n}, wgmma_{name}> {{\n"
        f"  {params}__device__ __forceinline__ static void run(float (&d)[{regs}], unsigned long long desc_a, unsigned long long desc_b, int scale_d) {{\n"
        f"{check}"
        f"    asm volatile(\n"
        f"        \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{s}, 0;\\n\"\n"
        f"        \"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{a_type}.{b_type} {{{acc}}}, %{a}, %{b}, {tail};\\n}}\\n\"\n"
        f"        : {outs}\n"
        f"        : \"l\"(desc_a), \"l\"(desc_b), \"r\"(scale_d){imms});\n"
        f"  }}\n"
        f"{registers_a}"
        f"}};\n"
    )


def main():
    out = [
        "// wgmma.mma_async wrappers, one per (N, input type): D[64 x N] += A[64 x K] * B[K x N] for the",
        "// warpgroup, A and B read from shared memory through matrix descriptors; run<TransA, TransB> with 1",
        "// for an M-major A or N-major B (f16/bf16 only; tf32 and the 8-bit floats e4m3, e5m2 read K-major",
        "// operands only, and an 8-bit instruction covers 32 of K). tf32 also has run_registers_a: A from",
        "// registers, for an M-major A that the consumer loads from shared memory itself.",
        "// Written by tools/gen_wgmma_ops.py (each shape names all N / 2 accumulator registers); edit the script.",
        "//",
        "// scale_d (0: D = A * B, 1: D += A * B) travels as a predicate set from a register, never as an",
        "// immediate: NVRTC 13.0 crashed on the immediate form (issue 5).",
        "#pragma once",
        "",
        "namespace tilejit {",
        "namespace sm90 {",
        "",
        "struct wgmma_bf16 {};",
        "struct wgmma_f16 {};",
        "struct wgmma_tf32 {};",
    ] + [f"struct wgmma_{name} {{}};" for name, _, _, k in TYPES if k == 32] + [
        "",
        "template <int N, class Input> struct wgmma_op;",
        "",
    ]
    for n in SHAPES:
        for name, a_type, b_type, k in TYPES:
            out.append(wrapper(n, name, a_type, b_type, k))
    out += ["}  // namespace sm90", "}  // namespace tilejit", ""]
    with open("kernels_templates/tilejit/wgmma_ops.cuh", "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
