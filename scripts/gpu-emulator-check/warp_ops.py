#!/usr/bin/env python3
"""Writes warp_ops.mlir: one host function whose gpu.launch kernels exercise
each warp-level op on values derived from the lane id (small integers, so
every result is exact and the GPU's and the emulator's outputs must agree
bit for bit): ldmatrix x1/x2/x4 with and without .trans, mma.sync m16n8k16
and m16n8k8 (f16) and m16n8k8 (tf32), gpu.shuffle xor/down/up/idx.

  python3 warp_ops.py > warp_ops.mlir
"""

WG = "#gpu.address_space<workgroup>"


def launch(body, attrib=""):
    return (
        "    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, "
        "%gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, "
        f"%sz = %c1) {attrib} {{\n{body}      gpu.terminator\n    }}\n")


def lane_values(name, count, mul, add, mod, off, ty, cast):
    """count values v[i] = ((lane * mul + i * add) % mod) - off, as `ty`."""
    out = []
    for i in range(count):
        out.append(
            f"      %{name}m{i} = arith.constant {mul} : index\n"
            f"      %{name}p{i} = arith.muli %tx, %{name}m{i} : index\n"
            f"      %{name}a{i} = arith.constant {i * add} : index\n"
            f"      %{name}s{i} = arith.addi %{name}p{i}, %{name}a{i} : index\n"
            f"      %{name}d{i} = arith.constant {mod} : index\n"
            f"      %{name}r{i} = arith.remui %{name}s{i}, %{name}d{i} : index\n"
            f"      %{name}o{i} = arith.constant {off} : index\n"
            f"      %{name}q{i} = arith.subi %{name}r{i}, %{name}o{i} : index\n"
            f"      %{name}i{i} = arith.index_cast %{name}q{i} : index to i32\n"
            f"      %{name}{i} = arith.sitofp %{name}i{i} : i32 to {ty}\n")
    return "".join(out)


def mma(name, k, ty, na, nb, shape_a, shape_b, tf32):
    body = lane_values("a", na, 7, 3, 11, 5, ty, None)
    body += lane_values("b", nb, 5, 2, 7, 3, ty, None)
    body += lane_values("cc", 4, 1, 1, 5, 0, "f32", None)
    rows_a, cols = (int(x) for x in shape_a.split("x"))
    rows_b = int(shape_b.split("x")[0])

    def build(name, rows, vals):
        # Rows by from_elements, inserted into a zero n-D vector (the NVVM
        # lowering of n-D from_elements and shape_cast is not there).
        text = (f"      %{name}z = arith.constant dense<0.0> : "
                f"vector<{rows}x{cols}x{ty}>\n")
        prev = f"%{name}z"
        for r in range(rows):
            elems = ", ".join(vals[r * cols:(r + 1) * cols])
            text += (f"      %{name}row{r} = vector.from_elements {elems} : "
                     f"vector<{cols}x{ty}>\n"
                     f"      %{name}v{r} = vector.insert %{name}row{r}, {prev} "
                     f"[{r}] : vector<{cols}x{ty}> into "
                     f"vector<{rows}x{cols}x{ty}>\n")
            prev = f"%{name}v{r}"
        return text, prev

    ta, va = build("A", rows_a, [f"%a{i}" for i in range(na)])
    tb, vb = build("B", rows_b, [f"%b{i}" for i in range(nb)])
    body += ta + tb
    body += ("      %Cz = arith.constant dense<0.0> : vector<2x2xf32>\n"
             "      %Crow0 = vector.from_elements %cc0, %cc1 : vector<2xf32>\n"
             "      %Cv0 = vector.insert %Crow0, %Cz [0] : vector<2xf32> into "
             "vector<2x2xf32>\n"
             "      %Crow1 = vector.from_elements %cc2, %cc3 : vector<2xf32>\n"
             "      %vc = vector.insert %Crow1, %Cv0 [1] : vector<2xf32> into "
             "vector<2x2xf32>\n")
    attr = ", tf32Enabled" if tf32 else ""
    body += (
        f"      %vd = nvgpu.mma.sync ({va}, {vb}, %vc) {{mmaShape = [16, 8, {k}]"
        f"{attr}}} : (vector<{shape_a}x{ty}>, vector<{shape_b}x{ty}>, "
        "vector<2x2xf32>) -> vector<2x2xf32>\n")
    for i in range(2):
        for j in range(2):
            body += (f"      %d{i}{j} = vector.extract %vd[{i}, {j}] : f32 from "
                     "vector<2x2xf32>\n"
                     f"      %di{i}{j} = arith.constant {i} : index\n"
                     f"      %dj{i}{j} = arith.constant {j} : index\n"
                     f"      memref.store %d{i}{j}, %{name}[%tx, %di{i}{j}, "
                     f"%dj{i}{j}] : memref<32x2x2xf32>\n")
    return launch(body)


def ldmatrix(idx, tiles, trans):
    body = (
        "      %c0 = arith.constant 0 : index\n"
        "      %c1i = arith.constant 1 : index\n"
        "      %c8 = arith.constant 8 : index\n"
        "      %z = arith.constant 0.0 : f16\n"
        "      scf.for %j = %c0 to %c8 step %c1i {\n"
        "        %r8 = arith.muli %tx, %c8 : index\n"
        "        %e = arith.addi %r8, %j : index\n"
        "        %ei = arith.index_cast %e : index to i32\n"
        "        %v = arith.sitofp %ei : i32 to f16\n"
        f"        memref.store %v, %sm[%tx, %j] : memref<32x8xf16, {WG}>\n"
        f"        memref.store %z, %ldm[%i{idx}, %tx, %j] : memref<6x32x8xf16>\n"
        "      }\n"
        "      gpu.barrier\n"
        f"      %rows = arith.constant {8 * tiles} : index\n"
        "      %row = arith.remui %tx, %rows : index\n"
        f"      %m = nvgpu.ldmatrix %sm[%row, %c0] {{numTiles = {tiles} : i32, "
        f"transpose = {'true' if trans else 'false'}}} : memref<32x8xf16, {WG}>"
        f" -> vector<{tiles}x2xf16>\n"
    )
    for i in range(tiles):
        for j in range(2):
            body += (f"      %x{i}{j} = vector.extract %m[{i}, {j}] : f16 from "
                     f"vector<{tiles}x2xf16>\n"
                     f"      %xc{i}{j} = arith.constant {2 * i + j} : index\n"
                     f"      memref.store %x{i}{j}, %ldm[%i{idx}, %tx, %xc{i}{j}]"
                     " : memref<6x32x8xf16>\n")
    return launch(body, f"workgroup(%sm : memref<32x8xf16, {WG}>)")


def shuffles():
    body = "      %w = arith.constant 32 : i32\n"
    body += ("      %t3 = arith.constant 3 : index\n"
             "      %tm = arith.muli %tx, %t3 : index\n"
             "      %tv = arith.addi %tm, %c1 : index\n"
             "      %val = arith.index_cast %tv : index to i32\n")
    for m, mode in enumerate(["xor", "down", "up", "idx"]):
        for o, off in enumerate([1, 2, 5, 16, 31]):
            n = f"{m}_{o}"
            body += (
                f"      %off{n} = arith.constant {off} : i32\n"
                f"      %r{n}, %ok{n} = gpu.shuffle {mode} %val, %off{n}, %w : i32\n"
                f"      %m{n} = arith.constant {m} : index\n"
                f"      %o{n} = arith.constant {o} : index\n"
                f"      memref.store %r{n}, %shfl[%m{n}, %o{n}, %tx] : memref<4x5x32xi32>\n"
                f"      %okx{n} = arith.extui %ok{n} : i1 to i32\n"
                f"      memref.store %okx{n}, %valid[%m{n}, %o{n}, %tx] : memref<4x5x32xi32>\n")
    return launch(body)


def main():
    print("// Generated by scripts/gpu-emulator-check/warp_ops.py.")
    print("func.func @warp_ops(%ldm: memref<6x32x8xf16>, "
          "%mma16: memref<32x2x2xf32>, %mma8: memref<32x2x2xf32>, "
          "%tf32: memref<32x2x2xf32>, %shfl: memref<4x5x32xi32>, "
          "%valid: memref<4x5x32xi32>) {")
    print("    %c1 = arith.constant 1 : index")
    print("    %c32 = arith.constant 32 : index")
    for i in range(6):
        print(f"    %i{i} = arith.constant {i} : index")
    for idx, (tiles, trans) in enumerate(
            [(1, False), (2, False), (4, False), (1, True), (2, True),
             (4, True)]):
        print(ldmatrix(idx, tiles, trans), end="")
    print(mma("mma16", 16, "f16", 8, 4, "4x2", "2x2", False), end="")
    print(mma("mma8", 8, "f16", 4, 2, "2x2", "1x2", False), end="")
    print(mma("tf32", 8, "f32", 4, 2, "4x1", "2x1", True), end="")
    print(shuffles(), end="")
    print("    return\n}")


main()
