#!/usr/bin/env python3
"""Simulates the kernels strata-gpu-matrix-tiles writes, lane by lane.

No AMD or NVIDIA GPU is needed (nor available): this runs `strata-opt INPUT
--strata-gpu-matrix-tiles=kind=K --mlir-print-op-generic` for K in mfma,
wmma32, scalar, shared (Vulkan's and CUDA's f32 tiles on the FMAs), mma and
wgmma, and interprets each rewritten func.func for every
workgroup of a small grid (fewer workgroups than tiles, so the grid-stride loop
takes several tiles), its work items (the kernel's workgroup size) in lock step,
with scf.if masking lanes and workgroup memory shared by them. amdgpu.mfma
(16x16x4 f32, 16x16x16 f16; wave 64) and amdgpu.wmma (16x16x16 f16, gfx11 wave
32) compute with the per-lane layouts documented by AMD and used by IREE, and
NVIDIA's nvvm.ldmatrix (x4, 8x8 matrices of 16-bit elements) and nvvm.mma.sync
(m16n8k16, f16 or bf16; warp 32; registers of two elements adjacent along K)
with those of the PTX ISA guide (MatrixTiles.cpp's header):

  MFMA: A[l%16][(K/4)*(l/16)+v], B[(K/4)*(l/16)+v][l%16], C[4*(l/16)+v][l%16]
  WMMA: A[l%16][v], B[v][l%16] (lanes 16-31 repeat 0-15), C[2*v+l/16][l%16]
  mma.sync (g = l/4, t = l%4): A registers A[g][2t..], A[g+8][2t..],
    A[g][2t+8..], A[g+8][2t+8..]; B registers B[2t..][g], B[2t+8..][g];
    C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1]
  ldmatrix x4: lanes 8q..8q+7 address the rows of matrix q; lane l receives
    word l%4 of row l/4 of each matrix

nvvm.wgmma.mma_async (kind wgmma, sm_90a: m64nNk16, f16 or bf16, a warpgroup of
128 invocations) reads A (K-major) and B (N-major) from workgroup memory
through matrix descriptors (start, leading and stride byte offsets, no
swizzle), as the PTX ISA lays the unswizzled core matrices out (8 rows of 16
bytes each): A[m][k] at start + (m / 8) SBO + (k / 8) LBO + (m % 8) 16 +
(k % 8) 2, B[k][n] at start + (n / 8) SBO + (k / 8) LBO + (k % 8) 16 + (n % 8)
2; invocation 32w + l holds D[16w + g][8j + 2t ..] and D[16w + g + 8][8j + 2t
..] in d[4j..4j + 3]. Its results are readable after a wgmma.wait_group lets
it finish; what it reads must have been fenced for the async proxy
(nvvm.fence.proxy async.shared) by its writer and published by a barrier,
and nothing may overwrite it before the wait; a wgmma.fence must precede the
instructions after each wait.

A static M of 16 or fewer (32 with CUDA's mma) takes the few-rows body (K split
over the warps, lane-dependent loop bounds run masked, partial sums in
workgroup memory).

With kind mma the tiles reach workgroup memory through registers
(mma-stages=1) or by nvvm.cp.async.shared.global into 2 or 3 buffers
(16 bytes from a binding's address; a copy lands when its invocation's
nvvm.cp.async.wait.group lets it), B's fragments then loaded transposed
(ldmatrix .trans: lane l receives column l / 4 of rows 2 (l % 4) and
2 (l % 4) + 1 of each matrix); with mma-wide-tiles the kernels of WIDE take
128x256 tiles of eight warps.

A convolution (CONV_STRIDES; NHWC, HWCF, M its batch) is checked as the
matmul it is: C viewed as (N * OH * OW) x F against a plain convolution.

Checked, per kernel, kind and M: every element of C against a plain
reference (matmul or convolution, fill or C's old values, the elementwise
epilogue); that
each element of C is stored exactly once, by the iteration of the tile that
holds it, and nothing else is stored; that every load and store is in bounds
(rows of A past M clamped, stores past M masked); that wmma32 keeps f32
kernels on the scalar body (strata.matrix_tiles = "scalar"); workgroup
memory as the memory model orders it (a word written or landed since the
last barrier read only by its writer, a word read since then written only by
its reader, no word read or copied to while a cp.async to it is in flight,
no copy in flight at the end); that the eight rows of each matrix an
ldmatrix reads fall in distinct banks.
Not checked: that the documented layouts are what the silicon does (only
hardware can say), rounding (inputs are small integers, so every f16/f32 value
is exact and extf/truncf are identities), timing, races between workgroups.
`--wrong-layout` swaps the C row formulas (MFMA 4*v+l/16, WMMA 8*(l/16)+v,
mma.sync and wgmma rows g+8 and g): it exits 1 only when the mfma, wmma32, mma and wgmma bodies,
and they alone, then fail (CTest runs it with WILL_FAIL), and 0 when a run
breaks or misses the error. Kind mma tiles the f16 kernels (the f32 ones here
have an N too narrow for its tiles and stay untouched).

usage: matrix_tiles_sim.py --strata-opt PATH [--wrong-layout] KERNELS.mlir
"""
import argparse
import operator
import random
import re
import subprocess
import sys

TILE, U64 = 32, 1 << 64
# Workgroup buffers lie one after another (128-byte aligned) from SHARED_BASE,
# whose low 18 bits (what a wgmma descriptor keeps) are zero.
SHARED_BASE = 1 << 40
GLOBAL_BASE = 1 << 50  # the address of binding i is (i + 1) * GLOBAL_BASE


class SimError(Exception):
    """The kernel did something it must not (or that is not simulated)."""


def check(cond, msg):
    if not cond:
        raise SimError(msg)


# ------------------------------------------------------------------ parsing
class Op:
    def __init__(self, results, name, operands, text):
        self.results, self.name, self.operands, self.text = results, name, operands, text
        self.regions = []  # [(block args, ops)]


OP_RE = re.compile(r'^\s*(?:(%\w+)(?::(\d+))? = )?"([\w.]+)"\((.*?)\)(.*)$')


def parse_ops(lines, pos):
    """Ops of one block up to its closing line: ((args, ops), pos, closing line)."""
    args, ops = [], []
    while pos < len(lines):
        s = lines[pos].strip()
        pos += 1
        if not s or s.startswith("#"):  # attribute aliases (#map = ...)
            continue
        if s.startswith("}"):
            return (args, ops), pos, s
        if s.startswith("^bb"):
            args = re.findall(r"(%\w+):", s)
            continue
        m = OP_RE.match(lines[pos - 1])
        check(m, f"cannot parse: {s}")
        res, count, name, operands, rest = m.groups()
        results = [f"{res}#{i}" for i in range(int(count))] if count else ([res] if res else [])
        op = Op(results, name, re.findall(r"%\w+(?:#\d+)?", operands), rest)
        if rest.rstrip().endswith("({"):
            while True:
                block, pos, close = parse_ops(lines, pos)
                op.regions.append(block)
                if not close.startswith("}, {"):
                    op.text += close  # attributes and types follow the regions
                    break
        ops.append(op)
    return (args, ops), pos, ""


def memref_types(text):
    """[(shape with None for ?, element type)] of the memref types in text (an
    element type may be a vector: workgroup memory of vector<4xf32>)."""
    types = re.findall(r"memref<((?:[\d?]+x)*)(vector<[^>]*>|[\w]+)", text)
    return [([None if d == "?" else int(d) for d in dims.split("x")[:-1]], element)
            for dims, element in types]


# ------------------------------------------------------------ matrix ops
# The row of C that element v of lane l holds (its column is l % 16).
def mfma_row(l, v, wrong):
    return 4 * v + l // 16 if wrong else 4 * (l // 16) + v


def wmma_row(l, v, wrong):
    return 8 * (l // 16) + v if wrong else 2 * v + l // 16


def mfma(a, b, c, k, wrong):
    """amdgpu.mfma 16x16xk for one wave of 64 lanes (per-lane scalars or tuples)."""
    a, b = ([x if isinstance(x, tuple) else (x,) for x in y] for y in (a, b))
    per = len(a[0])
    check(k == 4 * per and all(len(x) == per for x in a + b) and all(len(x) == 4 for x in c),
          f"mfma k={k}, {per} per lane")
    A = [[None] * k for _ in range(16)]
    B = [[None] * 16 for _ in range(k)]
    for l in range(64):
        for v in range(per):
            A[l % 16][per * (l // 16) + v] = a[l][v]
            B[per * (l // 16) + v][l % 16] = b[l][v]
    D = [[sum(A[i][x] * B[x][j] for x in range(k)) for j in range(16)] for i in range(16)]
    return [tuple(c[l][v] + D[mfma_row(l, v, wrong)][l % 16] for v in range(4))
            for l in range(64)]


def wmma(a, b, c, wrong):
    """amdgpu.wmma 16x16x16 f16 -> f32 for one wave of 32 lanes (gfx11)."""
    for l in range(16):  # RDNA3 ISA 7.9: lanes 16-31 must repeat lanes 0-15
        check(a[l] == a[l + 16] and b[l] == b[l + 16], f"wmma: lane {l + 16} != lane {l}")
    check(all(len(x) == 16 for x in a + b) and all(len(x) == 8 for x in c), "wmma shapes")
    D = [[sum(a[i][x] * b[j][x] for x in range(16)) for j in range(16)] for i in range(16)]
    return [tuple(c[l][v] + D[wmma_row(l, v, wrong)][l % 16] for v in range(8))
            for l in range(32)]


def mma_sync(a, b, c, wrong):
    """nvvm.mma.sync m16n8k16 for one warp of 32 lanes: 4 A and 2 B registers of
    element pairs, 4 f32 accumulators per lane."""
    A = [[None] * 16 for _ in range(16)]
    B = [[None] * 8 for _ in range(16)]
    for l in range(32):
        g, t = l // 4, l % 4
        for reg, (row, col) in enumerate([(g, 2 * t), (g + 8, 2 * t), (g, 2 * t + 8), (g + 8, 2 * t + 8)]):
            A[row][col], A[row][col + 1] = a[l][reg]
        for reg, k in enumerate([2 * t, 2 * t + 8]):
            B[k][g], B[k + 1][g] = b[l][reg]
    check(all(x is not None for r in A + B for x in r), "mma.sync: an element of A or B unset")
    D = [[sum(A[i][x] * B[x][j] for x in range(16)) for j in range(8)] for i in range(16)]
    out = []
    for l in range(32):
        g, t = l // 4, l % 4
        top, bottom = (g + 8, g) if wrong else (g, g + 8)
        at = [(top, 2 * t), (top, 2 * t + 1), (bottom, 2 * t), (bottom, 2 * t + 1)]
        out.append(tuple(c[l][v] + D[i][j] for v, (i, j) in enumerate(at)))
    return out


class Accumulators(tuple):
    """One invocation's accumulators as a wgmma leaves them: readable once
    a wgmma.wait_group has let the wgmma finish (`done`)."""
    done = False


def wgmma_descriptor(desc):
    """The start byte (of the 256 KiB window), leading and stride byte offsets
    of a wgmma matrix descriptor; only unswizzled ones, base offset 0."""
    check(desc >> 62 == 0 and (desc >> 49) & 7 == 0,
          f"wgmma descriptor {desc:#x}: swizzling or a base offset (not simulated)")
    field = lambda shift: ((desc >> shift) & 0x3FFF) << 4
    return field(0), field(16), field(32)


def few_rows(kind):
    """kFewRows (kFewRowsCuda for mma): a static M up to this takes the
    few-rows body."""
    return 32 if kind in ("mma", "wgmma") else 16


def tile_shape(kind, m, n, wide=False):
    """The tile of C one workgroup computes: (rows, cols), as MatrixTiles.cpp
    chooses it (sharedTileShape for the staged kinds; mma-wide-tiles: 256
    columns where N allows them and they still make 128 tiles)."""
    if m is not None and m <= few_rows(kind):
        return m, 32
    if kind not in ("mma", "wgmma", "shared"):
        return TILE, TILE
    rows, cols = 128, 128 if n % 128 == 0 else 64
    tiles = lambda: float("inf") if m is None else -(-m // rows) * (n // cols)
    if tiles() < 128:
        rows = 64
    if tiles() < 128:
        cols = 64
    if wide and (rows, cols) == (128, 128) and n % 256 == 0 and (
            m is None or -(-m // 128) * (n // 256) >= 128):
        cols = 256
    return rows, cols


# ------------------------------------------------------------- execution
BINARY = {
    "arith.addi": lambda p, q: (p + q) % U64, "arith.subi": lambda p, q: (p - q) % U64,
    "arith.muli": lambda p, q: (p * q) % U64, "arith.divui": lambda p, q: p // q,
    "arith.remui": lambda p, q: p % q, "arith.ceildivui": lambda p, q: -(-p // q),
    "arith.minui": min, "arith.maxui": max, "arith.addf": lambda p, q: p + q,
    "arith.subf": lambda p, q: p - q, "arith.mulf": lambda p, q: p * q,
    "arith.maximumf": max, "arith.minimumf": min, "arith.andi": lambda p, q: p & q,
    "arith.xori": lambda p, q: p ^ q, "arith.ori": lambda p, q: p | q,
    "arith.shrui": lambda p, q: p >> q, "arith.shli": lambda p, q: (p << q) % U64,
}
# arith.cmpi: eq ne slt sle sgt sge ult ule ugt uge (indices are never negative)
CMPI = [lambda p, q: p == q, lambda p, q: p != q] + [
    lambda p, q: p < q, lambda p, q: p <= q, lambda p, q: p > q, lambda p, q: p >= q] * 2
# arith.cmpf (no NaNs here): 1 oeq 2 ogt 3 oge 4 olt 5 ole 6 one 8 ueq 9 ugt ...
CMPF = {1: operator.eq, 2: operator.gt, 3: operator.ge, 4: operator.lt, 5: operator.le,
        6: operator.ne, 8: operator.eq, 9: operator.gt, 10: operator.ge, 11: operator.lt,
        12: operator.le, 13: operator.ne}


class Buf:
    def __init__(self, shape, data, shared=False):
        self.shape, self.data, self.writes = shape, data, [0] * len(data)
        self.shared = shared  # workgroup memory
        if shared:
            # Per word: the barrier epoch and invocation of its last write,
            # the epoch of its last reads and who read in it, and the
            # invocation whose cp.async to it is in flight.
            n = len(data)
            self.w_epoch, self.w_lane = [-1] * n, [None] * n
            self.r_epoch, self.r_lanes = [-1] * n, [set() for _ in range(n)]
            self.pending = [None] * n
            # Per word: the writer's count of fence.proxy.async at the
            # write, and whether an unfinished wgmma reads it.
            self.w_fence, self.wgmma_reading = [0] * n, [False] * n

    def index(self, idx):
        lin = 0
        for i, d in zip(idx, self.shape):
            lin = lin * d + i
        return lin

    def get(self, *idx):
        return self.data[self.index(idx)]

    def view(self, shape):
        """The same elements in another shape (memref.collapse_shape); None in
        shape is what the others leave."""
        known = 1
        for d in shape:
            known *= d or 1
        v = Buf.__new__(Buf)
        v.__dict__.update(self.__dict__)
        v.shape = [d if d is not None else len(self.data) // known for d in shape]
        v.base = self
        return v


class Workgroup:
    """One workgroup's run. Workgroup memory is checked as the memory model
    orders it, invocation by invocation: a word written (or landed by a
    cp.async) since the last barrier may be read only by the invocation that
    wrote it, a word read since the last barrier may be written only by the
    invocation that read it, and nobody reads a word, or copies to it, while
    a cp.async to it is in flight (before the issuing invocation's
    cp.async.wait.group lets it land)."""

    def __init__(self, c, block, grid, wrong, size, tile, bindings):
        self.c, self.block, self.grid, self.wrong = c, block, grid, wrong
        self.wg, self.tile_rows, self.tile_cols = size, *tile
        self.env, self.tile, self.shared = {}, None, []
        self.bindings, self.epoch = bindings, 0
        # Per invocation: its cp.async copies not yet committed, and its
        # committed groups, oldest first; a copy is (buffer, word, 4 words).
        self.open = [[] for _ in range(size)]
        self.groups = [[] for _ in range(size)]
        self.offsets = []  # each workgroup buffer's byte offset from SHARED_BASE
        # wgmma: fence.proxy.async per invocation; whether wgmma.fence ran
        # since the last wait; groups not committed and committed, oldest
        # first (each: the words its wgmmas read, the results they make).
        self.proxy_fences = [0] * size
        self.wgmma_fenced = False
        self.wgmma_open, self.wgmma_groups = [], []

    def address(self, value, what="ldmatrix"):
        """The workgroup buffer and word an address (from
        memref.extract_aligned_pointer_as_index) points at."""
        byte = value - SHARED_BASE
        for buf, offset in zip(self.shared, self.offsets):
            if offset <= byte < offset + 4 * len(buf.data):
                check(byte % 16 == 0, f"{what}: address {value:#x} is not 16-byte aligned")
                return buf, (byte - offset) // 4
        raise SimError(f"{what}: address {value:#x} is not in workgroup memory")

    def read(self, buf, i, lane, what):
        check(buf.pending[i] is None,
              f"{what}: invocation {lane} reads a word whose cp.async (by invocation "
              f"{buf.pending[i]}) has not landed")
        check(buf.w_epoch[i] != self.epoch or buf.w_lane[i] == lane,
              f"{what}: invocation {lane} reads a word invocation {buf.w_lane[i]} "
              "wrote with no barrier between")
        if buf.r_epoch[i] != self.epoch:
            buf.r_epoch[i], buf.r_lanes[i] = self.epoch, set()
        buf.r_lanes[i].add(lane)

    def write(self, buf, i, lane, what, landing=False):
        check(landing or buf.pending[i] is None,
              f"{what}: invocation {lane} writes a word a cp.async (by invocation "
              f"{buf.pending[i]}) has in flight")
        check(not buf.wgmma_reading[i], f"{what}: invocation {lane} writes a word an "
              "unfinished wgmma reads")
        buf.w_fence[i] = self.proxy_fences[lane]
        others = buf.r_lanes[i] - {lane} if buf.r_epoch[i] == self.epoch else set()
        check(not others, f"{what}: invocation {lane} writes a word invocation "
              f"{min(others) if others else None} read with no barrier between")
        check(buf.w_epoch[i] != self.epoch or buf.w_lane[i] == lane,
              f"{what}: invocations {buf.w_lane[i]} and {lane} write one word with no "
              "barrier between")
        buf.w_epoch[i], buf.w_lane[i] = self.epoch, lane

    def land(self, lane, keep):
        """cp.async.wait.group: all but the newest `keep` groups of the
        invocation land."""
        groups = self.groups[lane]
        cut = max(len(groups) - keep, 0)
        done, self.groups[lane] = groups[:cut], groups[cut:]
        for group in done:
            for buf, word, words in group:
                for i, value in enumerate(words):
                    buf.pending[word + i] = None
                    self.write(buf, word + i, lane, "cp.async", landing=True)
                    buf.data[word + i] = value

    def finish(self):
        check(not any(self.open) and not any(self.groups),
              "cp.async copies still in flight at the end of the kernel")
        check(not self.wgmma_open and not self.wgmma_groups,
              "wgmma operations unfinished at the end of the kernel")

    def buf_at(self, op, name, types, idx, mask):
        """The buffer of a load/store and its linear index per active lane."""
        buf = self.env[name][0]
        (shape, _), = types
        check(len(shape) == len(buf.shape) and all(
            s is None or s == d for s, d in zip(shape, buf.shape)), f"{op.name}: type {shape}")
        lins = []
        for on, *ix in zip(mask, *idx):
            check(not on or all(0 <= i < d for i, d in zip(ix, buf.shape)),
                  f"{op.name} out of bounds: {ix} in {buf.shape}")
            lins.append(buf.index(ix) if on else None)
        return buf, lins

    def wgmma(self, op, ins, mask):
        """nvvm.wgmma.mma_async m64nNk16 for each warpgroup of 128 invocations:
        A (K-major) and B (N-major: layoutB row, the instruction's imm-trans-b)
        read from workgroup memory through their descriptors, unswizzled (core
        matrices of 8 rows of 16 bytes; element (m, k) of A at start + (m / 8)
        SBO + (k / 8) LBO + (m % 8) 16 + (k % 8) 2, element (k, n) of B at start
        + (n / 8) SBO + (k / 8) LBO + (k % 8) 16 + (n % 8) 2); invocation 32w + l
        holds D[16w + g (+ 8)][8j + 2t (+ 1)] in d[4j..4j + 3]."""
        check(all(mask), "wgmma under a mask")
        check(self.wgmma_fenced, "a wgmma with no wgmma.fence since the last wait")
        dims = re.search(r"shape = #nvvm.shape<m = (\d+), n = (\d+), k = (\d+)>", op.text)
        m, n, k = (int(x) for x in dims.groups())
        check((m, k) == (64, 16) and all(s in op.text for s in (
            "layoutA = #nvvm.mma_layout<row>", "layoutB = #nvvm.mma_layout<row>",
            "scaleA = #nvvm.wgmma_scale_in<one>", "scaleB = #nvvm.wgmma_scale_in<one>",
            "scaleD = #nvvm.wgmma_scale_out<one>", "typeD = #nvvm.wgmma_type<f32>")),
            f"wgmma: {op.text}")
        acc, desc_a, desc_b = ins
        reads, results = set(), []

        def element(start, offset):
            buf, word = self.address(SHARED_BASE + start, "wgmma")
            word += offset // 4
            check(word < len(buf.data), "wgmma reads past a workgroup buffer")
            check(buf.pending[word] is None, "wgmma reads a word whose cp.async has not landed")
            check(buf.w_epoch[word] != self.epoch, "wgmma reads a word written since the last barrier")
            writer = buf.w_lane[word]
            check(writer is not None and self.proxy_fences[writer] > buf.w_fence[word],
                  "wgmma reads a word its writer did not fence.proxy.async after writing")
            reads.add((buf, word))
            return buf.data[word][offset % 4 // 2]

        out = []
        for w in range(0, self.wg, 128):
            da, db = set(desc_a[w:w + 128]), set(desc_b[w:w + 128])
            check(len(da) == 1 and len(db) == 1, "wgmma descriptors differ within a warpgroup")
            (sa, la, ta), (sb, lb, tb) = wgmma_descriptor(da.pop()), wgmma_descriptor(db.pop())
            A = [[element(sa, (i // 8) * ta + (x // 8) * la + (i % 8) * 16 + (x % 8) * 2)
                  for x in range(16)] for i in range(64)]
            B = [[element(sb, (j // 8) * tb + (x // 8) * lb + (x % 8) * 16 + (j % 8) * 2)
                  for j in range(n)] for x in range(16)]
            D = [[sum(A[i][x] * B[x][j] for x in range(16)) for j in range(n)] for i in range(64)]
            for lane in range(128):
                c = acc[w + lane]
                check(len(c) == n // 2 and None not in c, "wgmma accumulators unset")
                warp, g, t = lane // 32, lane % 32 // 4, lane % 4
                top, bottom = (g + 8, g) if self.wrong else (g, g + 8)
                values = []
                for j in range(n // 8):
                    for v in range(4):
                        values.append(c[4 * j + v] + D[16 * warp + (top if v < 2 else bottom)]
                                      [8 * j + 2 * t + v % 2])
                result = Accumulators(values)
                results.append(result)
                out.append(result)
        for buf, word in reads:
            buf.wgmma_reading[word] = True
        self.wgmma_open.append((reads, results))
        return out

    def block_ops(self, ops, mask, depth):
        for op in ops:
            if op.name == "scf.yield":
                return [self.env[x] for x in op.operands]
            self.op(op, mask, depth)
        return None

    def op(self, op, mask, depth):
        n, env = op.name, self.env
        ins = [env[x] for x in op.operands]
        lanes = lambda f: [f(*x) if on else None for on, x in zip(mask, zip(*ins))]
        WG = self.wg
        put = lambda values: env.__setitem__(op.results[0], values)
        if n == "arith.constant":
            m = re.search(r"value = (dense<([^>]*)>|(-?[\d.e+-]+)) : (\w+)", op.text)
            if m.group(2) is not None:
                length = int(re.search(r"vector<(\d+)x", op.text).group(1))
                put([tuple([float(m.group(2))] * length)] * WG)
            else:
                put([float(m.group(3)) if m.group(4).startswith("f") else int(m.group(3))] * WG)
        elif n in BINARY:
            put(lanes(BINARY[n]))
        elif n in ("arith.extf", "arith.index_cast", "arith.index_castui"):
            put(lanes(lambda x: x))
        elif n == "arith.truncf":  # exact for the small integers used here
            check(all(x is None or (x == int(x) and abs(x) <= 2048) for x in ins[0]), "truncf")
            put(lanes(lambda x: x))
        elif n in ("arith.cmpi", "arith.cmpf"):
            pred = int(re.search(r"predicate = (\d+)", op.text).group(1))
            put(lanes(CMPI[pred] if n == "arith.cmpi" else CMPF[pred]))
        elif n == "math.fma":
            put(lanes(lambda p, q, r: p * q + r))
        elif n == "arith.select":
            put(lanes(lambda c, p, q: p if c else q))
        elif n in ("gpu.thread_id", "gpu.block_id", "gpu.grid_dim"):
            check("dimension = #gpu<dim x>" in op.text, f"{n} not along x")
            put(list(range(WG)) if n == "gpu.thread_id" else
                [self.block if n == "gpu.block_id" else self.grid] * WG)
        elif n == "memref.collapse_shape":
            shape, _ = memref_types(op.text)[-1]  # the result's type
            put([ins[0][0].view(shape)] * WG)
        elif n == "memref.dim":
            put(lanes(lambda b, i: b.shape[i]))
        elif n == "memref.load":
            buf, lins = self.buf_at(op, op.operands[0], memref_types(op.text), ins[1:], mask)
            if buf.shared:
                for lane, i in enumerate(lins):
                    if i is not None:
                        self.read(buf, i, lane, n)
            put([buf.data[i] if i is not None else None for i in lins])
        elif n == "memref.store":
            buf, lins = self.buf_at(op, op.operands[1], memref_types(op.text), ins[2:], mask)
            check(buf is self.c or getattr(buf, "base", None) is self.c or buf.shared,
                  "store to a buffer other than C")
            if buf.shared:
                for lane, (val, i) in enumerate(zip(ins[0], lins)):
                    if i is not None:
                        self.write(buf, i, lane, n)
                        buf.data[i] = val
                return
            rows, cols = self.tile_rows, self.tile_cols
            for val, i, (row, col) in zip(ins[0], lins, zip(*ins[2:])):
                if i is not None:  # in the iteration of its tile only
                    check(row // rows * -(-buf.shape[1] // cols) + col // cols == self.tile,
                          f"C[{row}, {col}] stored in the iteration of tile {self.tile}")
                    buf.data[i], buf.writes[i] = val, buf.writes[i] + 1
        elif n == "memref.alloc":
            (shape, _), = memref_types(op.text)
            check("Workgroup" in op.text and len(shape) == 1, f"memref.alloc: {op.text}")
            end = self.offsets[-1] + 4 * len(self.shared[-1].data) if self.shared else 0
            self.offsets.append(-(-end // 128) * 128)
            self.shared.append(Buf(shape, [None] * shape[0], shared=True))
            put([self.shared[-1]] * WG)
        elif n == "memref.extract_aligned_pointer_as_index":
            buf = ins[0][0]
            check(buf.shared or buf in self.bindings, "a pointer to an unknown buffer")
            put([SHARED_BASE + self.offsets[self.shared.index(buf)] if buf.shared else
                 GLOBAL_BASE * (self.bindings.index(buf) + 1)] * WG)
        elif n in ("vector.load", "vector.store"):
            store = n == "vector.store"
            vector = int(re.search(r"vector<(\d+)x", op.text).group(1))
            buf, lins = self.buf_at(op, op.operands[int(store)], memref_types(op.text),
                                    ins[1 + int(store):], mask)
            check(store == buf.shared, f"{n} of {'a binding' if store else 'workgroup memory'}")
            check(all(i is None or (i + vector <= len(buf.data) and
                                    (i % buf.shape[-1]) + vector <= buf.shape[-1]) for i in lins),
                  f"{n} of {vector} elements past the end of a row")
            if store:
                for lane, (val, i) in enumerate(zip(ins[0], lins)):
                    if i is not None:
                        for x in range(i, i + vector):
                            self.write(buf, x, lane, n)
                        buf.data[i:i + vector] = list(val)
            else:
                put([tuple(buf.data[i:i + vector]) if i is not None else None for i in lins])
        elif n == "vector.bitcast":  # 16-bit elements paired into 32-bit words
            put(lanes(lambda v: tuple(zip(v[0::2], v[1::2]))))
        elif n == "vector.shuffle":
            order = [int(x) for x in re.search(r"mask = array<i64: ([\d, ]+)>", op.text).group(1).split(",")]
            put(lanes(lambda p, q: tuple((p + q)[i] for i in order)))
        elif n in ("llvm.bitcast", "llvm.inttoptr"):  # a word as 2 x f16; an address
            put(lanes(lambda x: x))
        elif n == "llvm.extractvalue":
            pos = int(re.search(r"position = array<i64: (\d+)>", op.text).group(1))
            for v in ins[0]:
                check(not isinstance(v, Accumulators) or v.done,
                      "an accumulator read before wgmma.wait_group lets its wgmma finish")
            put(lanes(lambda v: v[pos]))
        elif n == "gpu.barrier":
            check(all(mask), "gpu.barrier under a mask")
            self.epoch += 1  # every lane runs each op before the next
        elif n == "nvvm.ldmatrix":
            trans = "<col>" in op.text
            check(all(mask) and "num = 4" in op.text and ("<row>" in op.text or trans)
                  and "m = 8, n = 8" in op.text, f"ldmatrix: {op.text}")
            result = []
            for w in range(0, WG, 32):
                rows, words = [], []
                for lane, address in enumerate(ins[0][w:w + 32], w):
                    buf, word = self.address(address)
                    check(word + 4 <= len(buf.data), "ldmatrix past the end of workgroup memory")
                    for i in range(word, word + 4):
                        self.read(buf, i, lane, n)
                    rows.append(buf.data[word:word + 4])
                    words.append(word)
                # Each matrix's eight rows in distinct banks (32 of 4 bytes):
                # no conflict.
                for q in range(4):
                    banks = {(x + i) % 32 for x in words[8 * q:8 * q + 8] for i in range(4)}
                    check(len(banks) == 32, f"ldmatrix: matrix {q} of warp {w // 32} reads "
                          f"words {words[8 * q:8 * q + 8]}, {32 - len(banks)} bank conflicts")
                if trans:
                    # Lane l receives column l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
                    result += [tuple((rows[8 * q + 2 * (l % 4)][l // 8][l // 4 % 2],
                                      rows[8 * q + 2 * (l % 4) + 1][l // 8][l // 4 % 2])
                                     for q in range(4)) for l in range(32)]
                else:
                    result += [tuple(rows[8 * q + l // 4][l % 4] for q in range(4))
                               for l in range(32)]
            put(result)
        elif n == "nvvm.cp.async.shared.global":
            # A third operand: the bytes read (src-size); the rest of the 16
            # are zero-filled.
            check("size = 16 " in op.text and "load_cache_modifier cg>" in op.text
                  and len(ins) in (2, 3), f"cp.async: {op.text}")
            sizes = ins[2] if len(ins) == 3 else [16] * WG
            for lane, (on, dst, src, size) in enumerate(zip(mask, ins[0], ins[1], sizes)):
                if not on:
                    continue
                check(size in (0, 16), f"cp.async of {size} bytes (0 or 16 simulated)")
                buf, word = self.address(dst, "cp.async")
                index, byte = divmod(src, GLOBAL_BASE)
                check(1 <= index <= len(self.bindings) and byte % 16 == 0,
                      f"cp.async: source {src:#x} is not a 16-byte aligned binding address")
                source = self.bindings[index - 1]
                check(source.element_bytes == 2, "cp.async from a binding of 4-byte elements")
                first = byte // 2
                check(first + 8 <= len(source.data) and word + 4 <= len(buf.data),
                      f"cp.async past the end: elements {first}.. of {len(source.data)}")
                for i in range(word, word + 4):
                    self.write(buf, i, lane, n)
                    check(buf.pending[i] is None, "cp.async to a word with a copy in flight")
                    buf.pending[i] = lane
                elements = source.data[first:first + 8] if size else [0] * 8
                self.open[lane].append((buf, word, list(zip(elements[0::2], elements[1::2]))))
        elif n == "nvvm.cp.async.commit.group":
            for lane, on in enumerate(mask):
                if on:
                    self.groups[lane].append(self.open[lane])
                    self.open[lane] = []
        elif n == "nvvm.cp.async.wait.group":
            keep = int(re.search(r"n = (\d+) : i32", op.text).group(1))
            for lane, on in enumerate(mask):
                if on:
                    self.land(lane, keep)
        elif n == "nvvm.mma.sync":
            check(all(mask), "mma.sync under a mask")
            check(all(s in op.text for s in ("m = 16, n = 8, k = 16", "layoutA = #nvvm.mma_layout<row>",
                                             "layoutB = #nvvm.mma_layout<col>",
                                             "operandSegmentSizes = array<i32: 4, 2, 4>")), op.text)
            a, b, c = ins[0:4], ins[4:6], ins[6:10]
            out = []
            for w in range(0, WG, 32):
                lane = lambda regs, l: tuple(r[w + l] for r in regs)
                out += mma_sync([lane(a, l) for l in range(32)], [lane(b, l) for l in range(32)],
                                [lane(c, l) for l in range(32)], self.wrong)
            put(out)
        elif n == "llvm.mlir.undef":
            count = len(re.findall(r"\bf32\b", op.text.split("->")[-1]))
            put([(None,) * count] * WG)
        elif n == "llvm.insertvalue":
            pos = int(re.search(r"position = array<i64: (\d+)>", op.text).group(1))
            put(lanes(lambda v, x: v[:pos] + (x,) + v[pos + 1:]))
        elif n == "nvvm.fence.proxy":
            check("proxy_kind<async.shared>" in op.text and "shared_space<cta>" in op.text,
                  f"fence.proxy: {op.text}")
            for lane, on in enumerate(mask):
                self.proxy_fences[lane] += on
        elif n == "nvvm.wgmma.fence.aligned":
            check(all(mask), "wgmma.fence under a mask")
            self.wgmma_fenced = True
        elif n == "nvvm.wgmma.mma_async":
            put(self.wgmma(op, ins, mask))
        elif n == "nvvm.wgmma.commit.group.sync.aligned":
            check(all(mask), "wgmma.commit_group under a mask")
            self.wgmma_groups.append(self.wgmma_open)
            self.wgmma_open = []
        elif n == "nvvm.wgmma.wait.group.sync.aligned":
            check(all(mask), "wgmma.wait_group under a mask")
            keep = int(re.search(r"group = (\d+) : i64", op.text).group(1))
            cut = max(len(self.wgmma_groups) - keep, 0)
            for group in self.wgmma_groups[:cut]:
                for reads, results in group:
                    for buf, i in reads:
                        buf.wgmma_reading[i] = False
                    for result in results:
                        result.done = True
            self.wgmma_groups = self.wgmma_groups[cut:]
            self.wgmma_fenced = False
        elif n == "vector.from_elements":
            put(lanes(lambda *v: tuple(v)))
        elif n == "vector.extract":
            pos = int(re.search(r"static_position = array<i64: (\d+)>", op.text).group(1))
            put(lanes(lambda v: v[pos]))
        elif n in ("amdgpu.mfma", "amdgpu.wmma"):
            check(all(mask), f"{n} under a mask")
            dims = [int(re.search(rf"\b{d} = (\d+) : i32", op.text).group(1)) for d in "mnk"]
            if n == "amdgpu.mfma":
                check(dims[:2] == [16, 16] and all(s in op.text for s in (
                    "blocks = 1 ", "cbsz = 0 ", "abid = 0 ", "mfma_perm_b none")), op.text)
                put([x for w in range(0, WG, 64) for x in mfma(
                    *(v[w:w + 64] for v in ins), dims[2], self.wrong)])
            else:
                check(dims == [16, 16, 16] and "subwordOffset = 0 " in op.text, op.text)
                put([x for w in range(0, WG, 32) for x in wmma(
                    *(v[w:w + 32] for v in ins), self.wrong)])
        elif n == "scf.if":
            check(not op.results, "scf.if with results")
            for region, taken in zip(op.regions, (True, False)):
                sub = [on and bool(c) == taken for on, c in zip(mask, ins[0])]
                if any(sub):
                    self.block_ops(region[1], sub, depth + 1)
        elif n == "scf.for":
            bounds, carried = [{x for on, x in zip(mask, v) if on} for v in ins[:3]], ins[3:]
            args, body = op.regions[0]
            if len(bounds[0]) > 1 or len(bounds[1]) > 1:
                # Bounds that differ between lanes (the few-rows body's last
                # steps of K): each lane runs its own trip count, masked.
                check(len(bounds[2]) == 1 and depth > 0, "scf.for: divergent step or grid loop")
                (step,) = bounds[2]
                trips = max(-(-(ub - lb) // step) if on else 0
                            for on, lb, ub in zip(mask, ins[0], ins[1]))
                for t in range(max(trips, 0)):
                    ivs = [lb + t * step if on else None for on, lb in zip(mask, ins[0])]
                    sub = [on and iv < ub for on, iv, ub in zip(mask, ivs, ins[1])]
                    env[args[0]] = ivs
                    for name, val in zip(args[1:], carried):
                        env[name] = val
                    new = self.block_ops(body, sub, depth + 1) or carried
                    carried = [[x if on else y for on, x, y in zip(sub, nv, ov)]
                               for nv, ov in zip(new, carried)]
                for name, val in zip(op.results, carried):
                    env[name] = val
                return
            (lb,), (ub,), (step,) = bounds
            for i in range(lb, ub, step):
                if depth == 0:
                    self.tile = i  # the grid-stride loop over tiles
                env[args[0]] = [i] * WG
                for name, val in zip(args[1:], carried):
                    env[name] = val
                carried = self.block_ops(body, mask, depth + 1) or carried
            for name, val in zip(op.results, carried):
                env[name] = val
        elif n != "func.return":
            raise SimError(f"op not simulated: {n}")


# ------------------------------------------------------------------ cases
# Per kernel of matrix_tiles_kernels.mlir: the M values (the size of every ?),
# the fill value (None: C accumulates) and the epilogue on C[i][j] = x.
SPECS = {
    "layer": ([70, 64, 1, 0], 0.0, lambda x, i, j, b: max(x + b[2].get(j), 0)),
    "half": ([64], 2.0, lambda x, i, j, b: x),
    "accumulate": ([40], None, lambda x, i, j, b: max(x + b[2].get(i, j), 0)),
    "half_accumulate": ([70, 64, 1, 0], None, lambda x, i, j, b: x),
    "half_wide": ([192], 0.0, lambda x, i, j, b: x),
    "few_rows": ([5], 0.0, lambda x, i, j, b: max(x + b[2].get(j), 0)),
    "few_rows_half": ([16], None, lambda x, i, j, b: x),
    "few_rows_32": ([32], None, lambda x, i, j, b: x),
    "half_masked": ([130, 64], 0.0, lambda x, i, j, b: x),
    "conv_half": ([3, 1], 0.0, lambda x, i, j, b: max(x + b[2].get(j), 0)),
    "half_256": ([130], 0.0, lambda x, i, j, b: x),
    "half_ktail": ([70, 64], 0.0, lambda x, i, j, b: x),
    "conv_ktail": ([2], 0.0, lambda x, i, j, b: x),
}
# The kernels whose K is not a multiple of 32: on the tensor cores only where
# cp.async copies the tiles (2 or more buffers), never on kinds that step
# 16 or 4 along K.
KTAIL = {"half_ktail", "conv_ktail"}
# The kernels whose tiles mma-wide-tiles changes (N a multiple of 256): the
# wide variants run these alone.
WIDE = {"half_256"}
# The convolutions among them (NHWC input, HWCF filter, no padding): their
# strides; M is the batch.
CONV_STRIDES = {"conv_half": 2, "conv_ktail": 1}


def walk(ops):
    for op in ops:
        yield op
        for _, sub in op.regions:
            yield from walk(sub)


def simulate(func, name, kind, m, wrong, rng, wide=False, stages=0):
    """Runs one kernel for M = m on every workgroup: (ok, expected body, report line)."""
    (args, body), text = func.regions[0], func.text
    types = memref_types(re.search(r"function_type = \(([^)]*)\)", text).group(1))
    _, fill, epilogue = SPECS[name]
    bufs = []
    for dims, element in types:
        shape = [m if d is None else d for d in dims]
        size = 1
        for d in shape:
            size *= d
        bufs.append(Buf(shape, [rng.randint(-3, 3) for _ in range(size)]))
        bufs[-1].element_bytes = int(element[1:]) // 8
    a, b, c = bufs[0], bufs[1], bufs[-1]
    stride = CONV_STRIDES.get(name)
    if stride:  # C as the (N * OH * OW) x F matrix it is, K the filter's taps
        mm, kk, nn = c.shape[0] * c.shape[1] * c.shape[2], b.shape[0] * b.shape[1] * b.shape[2], c.shape[3]
    else:
        (mm, kk), nn = a.shape, c.shape[1]
    c0 = list(c.data)

    def product(i, j):
        if not stride:
            return sum(a.get(i, x) * b.get(x, j) for x in range(kk))
        n, oh, ow = i // (c.shape[1] * c.shape[2]), i // c.shape[2] % c.shape[1], i % c.shape[2]
        taps = [(kh, kw, ch) for kh in range(b.shape[0]) for kw in range(b.shape[1])
                for ch in range(b.shape[2])]
        return sum(a.get(n, oh * stride + kh, ow * stride + kw, ch) * b.get(kh, kw, ch, j)
                   for kh, kw, ch in taps)
    # The tile as the pass chooses it from the static M (None: dynamic).
    rows, cols = tile_shape(kind, types[-1][0][0], nn, wide)
    tiles = -(-mm // rows) * -(-nn // cols)
    grid = max(1, (tiles + 1) // 2)  # fewer workgroups than tiles
    body_kind = (re.findall(r'strata.matrix_tiles = "([\w-]+)"', text) or [None])[0]
    half = types[0][1] == "f16"
    want = {"mma": "mma" if half else None, "wgmma": "wgmma" if half else None,
            "wmma32": "wmma32" if half else "scalar"}.get(kind, kind)
    if stride and kind not in ("mma", "wgmma", "shared"):
        want = None  # convolutions take the workgroup-memory tiles only
    if kind == "shared" and nn < 64:
        want = None  # too narrow for its tiles (sharedTileShape)
    if types[-1][0][0] is not None and types[-1][0][0] <= few_rows(kind):
        want = "few-rows"
    if name in KTAIL and (kind in ("mfma", "wmma32", "scalar") or stages == 1):
        want = None
    names = {op.name for op in walk(body)}
    uses = {k for k, o in (("mfma", "amdgpu.mfma"), ("wmma32", "amdgpu.wmma"),
                           ("mma", "nvvm.mma.sync"), ("wgmma", "nvvm.wgmma.mma_async"))
            if o in names}
    if want is None:  # left to the general distribution
        ok = body_kind is None and not uses
        return ok, kind, f"{name} kind={kind} M={m}: " + (
            "left alone: OK" if ok else f"body {body_kind}: FAIL (expected it left alone)")
    line = f"{name} kind={kind} M={m}: body {body_kind}, {tiles} tiles, grid {grid}"
    if body_kind != want or uses != {want} - {"scalar", "few-rows", "shared"} or (
            not stride and (mm != m or c.shape[0] != m)):
        return False, want, f"{line}: {want} body expected, ops {sorted(uses)}, M {mm}: FAIL"
    size = int(re.search(r"strata.workgroup_size = array<i32: (\d+), 1, 1>", text).group(1))
    err = None
    try:
        for block in range(grid):
            wg = Workgroup(c, block, grid, wrong, size, (rows, cols), bufs)
            for arg, buf in zip(args, bufs):
                wg.env[arg] = [buf] * size
            wg.block_ops(body, [True] * size, 0)
            wg.finish()
    except SimError as e:
        err = str(e)
    right = twice = 0
    for i in range(mm):
        for j in range(nn):
            at = i * nn + j  # C[i, j], row-major (a convolution's output likewise)
            start = fill if fill is not None else c0[at]
            ref = epilogue(start + product(i, j), i, j, bufs)
            writes = c.writes[at]
            right += c.data[at] == ref and writes == 1
            twice += writes > 1
    ok = err is None and right == mm * nn
    line += f": {right}/{mm * nn} elements right and stored once"
    line += (f" ({twice} stored more than once)" if twice else "") + (f", {err}" if err else "")
    return ok, want, line + (": OK" if ok else ": FAIL")


def run_cases(opts):
    """Prints a line per case; the bodies (mfma, wmma32, scalar, mma) of the failing ones."""
    failed = set()
    # mma with its workgroup memory filled through registers (1 buffer) and
    # by cp.async into 2 and 3 buffers; and with wide tiles (128x256, eight
    # warps) both ways.
    for kind, stages, wide in (("mfma", 0, 0), ("wmma32", 0, 0), ("scalar", 0, 0),
                               ("shared", 0, 0), ("mma", 1, 0), ("mma", 2, 0), ("mma", 3, 0),
                               ("mma", 1, 1), ("mma", 3, 1), ("wgmma", 3, 0), ("wgmma", 2, 0),
                               ("wgmma", 3, 1)):
        label = f"{kind}/{stages}" + ("/wide" if wide else "") if stages else kind
        if opts.only and label not in opts.only.split(","):
            continue
        # As on sm_90: workgroup memory past 48 KiB is dynamic shared memory.
        options = (f"kind={kind}" + (f" mma-stages={stages}" if stages else "")
                   + (" mma-wide-tiles=1 mma-workgroup-memory=232448" if wide else ""))
        cmd = [opts.strata_opt, opts.input, f"--strata-gpu-matrix-tiles={options}",
               "--mlir-print-op-generic"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        check(run.returncode == 0, f"{' '.join(cmd)} failed:\n{run.stderr}")
        (_, module), _, _ = parse_ops(run.stdout.splitlines(), 0)
        funcs = {re.search(r'sym_name = "(\w+)"', f.text).group(1): f
                 for f in module[0].regions[0][1] if f.name == "func.func"}
        for name, (sizes, _, _) in SPECS.items():
            check(name in funcs, f"no kernel @{name} in {opts.input}")
            if wide and name not in WIDE:
                continue
            for m in sizes:
                ok, body, line = simulate(funcs[name], name, kind, m, opts.wrong_layout,
                                          random.Random(f"{name}/{m}"), wide, stages)
                label = f"kind={kind}/{stages}" + ("/wide" if wide else "")
                print(line.replace(f"kind={kind}", label) if stages else line, flush=True)
                failed |= set() if ok else {body}
    return failed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--strata-opt", required=True)
    p.add_argument("--wrong-layout", action="store_true",
                   help="swap the MFMA and WMMA C row formulas: the run must fail")
    p.add_argument("--only", help="the runs to make, by label (mma/3, wgmma/2, mfma, ...)")
    p.add_argument("input")
    opts = p.parse_args()
    try:
        failed = run_cases(opts)
    except Exception as e:  # noqa: BLE001 (any breakage)
        # A broken run says nothing about layouts: with --wrong-layout it exits
        # 0, so that the test expecting a failure (WILL_FAIL) reports it.
        print(f"ERROR: {type(e).__name__}: {e}")
        return 0 if opts.wrong_layout else 2
    if not opts.wrong_layout:
        print("all cases OK" if not failed else f"FAILED: {sorted(failed)} bodies")
        return 1 if failed else 0
    # The matrix bodies must see the swapped layout; the scalar body must not.
    caught = failed == {"mfma", "wmma32", "mma", "wgmma"}
    print(f"wrong layout {'caught' if caught else 'NOT caught as expected'}: "
          f"failing bodies {sorted(failed)}")
    return 1 if caught else 0


if __name__ == "__main__":
    sys.exit(main())
