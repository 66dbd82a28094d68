#!/usr/bin/env python3
"""End-to-end op coverage: each op at odd shapes, against NumPy references.

    check_ops.py --bin=DIR --work=DIR [--target=vulkan --devices=vulkan] [FAMILY...]
    check_ops.py --bin=DIR --work=DIR --target=cuda --compile-only   (here, no GPU)
    check_ops.py --bin=DIR --work=DIR --target=cuda --run-only --devices=cuda   (then, on a GPU)

An op family is one small MLIR module (one function per shape) written here:
an elementwise arith or math op in a linalg.generic, a linalg named op, a TOSA
op, or an op on dynamic shapes. Each module is compiled with compile-module,
each function run with run-module on cpu-sync and cpu-task with random inputs
(with the op's edge values mixed in) and compared with NumPy computing the op
in float64 (integers in int64, wrapped). FAMILY arguments select families whose
names start with one of them.

Tolerances, by op:
- IEEE operations that round once (add, mul, div, sqrt, casts, floor, ...):
  bit-exact against the float64 result rounded to the result type, signed
  zeros included.
- transcendental functions: a number of ulps of the result type (ULP_TOLERANCE)
  plus an absolute 2^-126 (f32) so that results in the subnormal range may be
  flushed to zero. NaN and infinities must match exactly.
- accumulations (matmul, convolution, reductions, softmax): the rounding error
  bound of a sum of K terms, (K + 2) * 2^-24 * sum(|term|), per element, so a
  wrong or missing term of a K <= 1000 sum is caught.
- integers and i1: exact.

Ops that do not compile or give wrong results are listed in KNOWN_FAILURES
with the reason; the test checks that they still fail, so that a fix is
noticed and the entry removed. Ops the compiler rejects by design are listed in
UNSUPPORTED with the diagnostic it must give.

Prints one line per check and a summary (with the largest error seen per
transcendental function); exits 1 if any check fails.
"""
import argparse
import math
import os
import shutil
import signal
import subprocess
import sys
import zlib

import numpy as np

# cpu-task also with every command buffer run as it is recorded (stream=always;
# by default it streams only where that has been faster).
DEVICES = ["cpu-sync", "cpu-task", "cpu-task?threads=2&stream=always"]


def exp_ulps(x, below):
    """exp is within 1 ulp up to x = 127.5 ln 2 = 88.376 (measured on a dense
    sweep); above, upstream's approximation clamps the power of two to 2^127
    and evaluates its polynomial on a reduced argument up to 0.77: up to 5.5
    ulp measured (PolynomialApproximation.cpp says 2^-16 relative at worst)."""
    return np.where(np.asarray(x) > 88.37, 6.0, below)


# Largest error allowed, in ulps of the result type, for each function that is
# not correctly rounded: upstream's polynomial approximations for exp, expm1,
# log, log2, log1p, tanh and erf on f32 (the largest errors measured on dense
# sweeps of their ranges: exp 0.9 and expm1 2.4 below x = 88.37, log 0.8,
# log2 1.7, log1p 2.0, tanh 4.1, erf 3.9), the system libm for the others and
# for f64; rsqrt is 1 / sqrt (two roundings) and fpowi repeated squaring (up
# to 4 roundings for |n| <= 6). A number, or a function of the (first) input
# giving one per element.
ULP_TOLERANCE = {
    "exp": lambda x: exp_ulps(x, 2.0), "expm1": lambda x: exp_ulps(x, 3.0),
    "log": 2, "log2": 2, "log1p": 3, "tanh": 5, "erf": 5,
    "exp2": 2, "log10": 2, "erfc": 3, "rsqrt": 2, "sin": 2, "cos": 2, "tan": 2,
    "atan": 2, "atan2": 2, "sinh": 2, "cosh": 2, "cbrt": 2, "powf": 2, "fpowi": 4,
    "exp_f16": 1, "tanh_f16": 1, "exp_f64": 2,
}


def ulp_limit(tolerance, x):
    return tolerance(x) if callable(tolerance) else tolerance


# Wrong results and compile failures: the reason, and a text the failure must
# contain. A key is a family (it fails to compile, or some of its checks fail)
# or family.function (that function's checks fail). The test fails if one of
# them passes or fails differently, so that a fix is noticed and the entry
# removed.
KNOWN_FAILURES = {}

# On --target=vulkan the same checks run on the Vulkan driver; these fail
# there, for the reasons given (with text each failure contains). Lavapipe,
# the Vulkan device of CI, computes fma as a multiply and an add and flushes
# subnormals, both of which Vulkan's precision rules allow; the polynomial
# approximations the CPU uses then lose up to ~35 ulp. Since kernels ask for
# SignedZeroInfNanPreserve (strata-spirv-float-controls), which lavapipe
# honours, exp and the functions built on it (expm1, log1p, sigmoid, softmax)
# are exact enough there; the others below still are not.
_LAVAPIPE_FMA = ("lavapipe rounds fma twice and flushes subnormals: the math approximations lose up to ~35 ulp",
                 "on vulkan")
KNOWN_FAILURES_VULKAN = {
    **{name: _LAVAPIPE_FMA for name in [
        "atan", "atan2", "cbrt", "cos", "cosh", "erfc", "exp2", "fma", "log10", "sin", "sinh", "tan"]},
    "powf": ("GLSL pow is undefined for negative bases and lavapipe rounds fma twice", "on vulkan"),
    "linalg.powf": ("GLSL pow is undefined for negative bases and lavapipe rounds fma twice", "on vulkan"),
    "remf": ("SPIR-V OpFRem on lavapipe differs from C's fmodf", "on vulkan"),
    "fpowi": ("powers with constant exponents become chains of products, which round more often than the "
              "CPU's repeated squaring (up to ~6 ulp)", "on vulkan"),
    "exp_f64": ("f64 math functions are not lowered for Vulkan yet", "'math.exp'"),
}

# On --target=cuda (compiled here with --compile-only; run on an NVIDIA GPU
# where there is one: these failed on an H200, CUDA 13.0, and every other
# check passed).
PTXAS = shutil.which("ptxas") or shutil.which("ptxas", path="/usr/local/cuda/bin")
_CUDA_APPROXIMATIONS = ("the CPU's polynomial approximations lose accuracy at the edges of their ranges on "
                        "the GPU (wrong tiny results, inf or NaN for large or special inputs); cause not yet "
                        "found", "on cuda")
KNOWN_FAILURES_CUDA = {
    **{name: _CUDA_APPROXIMATIONS for name in [
        "atan", "atan2", "cbrt", "cos", "cosh", "exp2", "sin", "sinh", "tan"]},
}

# On --target=rocm (compiled here with --compile-only; every code object read
# back with rocm-code-objects; not yet run on an AMD GPU).
KNOWN_FAILURES_ROCM = {}

# Ops the compiler rejects by design: family -> text its diagnostic contains.
UNSUPPORTED = {
    "index_tensor_argument": "argument 0: expected integer or float elements, got 'tensor<7xindex>'",
}

U32 = 2.0 ** -24  # unit roundoff of f32

NP_TYPES = {
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
}


def np_type(t):
    return NP_TYPES[t]


def is_float(t):
    return t[0] == "f"


def tensor_type(shape, t):
    dims = "".join("%sx" % ("?" if d is None else d) for d in shape)
    return "tensor<%s%s>" % (dims, t)


def shape_name(shape):
    return "x".join(str(d) for d in shape) if shape else "scalar"


# ---------------------------------------------------------------------------
# Expected results and comparison


class Expected:
    """A reference result in float64 (or int64/bool) and how close to match.

    mode is "exact" (bit-exact after rounding to the result type, NaN matching
    NaN, the sign of zeros too unless signed_zeros is False), "ulp" (within
    `ulp` ulps of the result type, a number or one per element, plus `atol`),
    or "sum" (within `slack`, per-element absolute bounds, plus `atol`).
    """

    def __init__(self, values, dtype, mode="exact", ulp=0.0, atol=0.0, slack=None,
                 signed_zeros=True):
        self.values = np.asarray(values)
        self.dtype = dtype
        self.mode = mode
        self.ulp = ulp
        self.atol = atol
        self.slack = slack
        self.signed_zeros = signed_zeros


def sum_bound(terms_abs_sum, count):
    """The rounding bound of a sum of `count` f32 terms whose |terms| sum to S."""
    return (count + 2) * U32 * np.asarray(terms_abs_sum, dtype=np.float64)


class Mismatch(Exception):
    pass


def compare(actual, exp):
    """Returns (max abs error, max relative error, max ulp error, max error / allowed)
    or raises Mismatch. The relative and ulp errors are over results in the
    normal range (the subnormal ones may be flushed to zero)."""
    want_dtype = np.dtype(exp.dtype)
    if actual.dtype != want_dtype or actual.shape != exp.values.shape:
        raise Mismatch("got %s %s, expected %s %s" % (
            actual.shape, actual.dtype, exp.values.shape, want_dtype))
    if want_dtype.kind in "biu":
        want = exp.values.astype(want_dtype)
        bad = actual != want
        if bad.any():
            i = np.unravel_index(np.argmax(bad), bad.shape)
            raise Mismatch("element %s is %r, expected %r (exact)" % (
                list(i), actual[i].item(), want[i].item()))
        return 0.0, 0.0, 0.0, 0.0
    a = actual.astype(np.float64)
    e = exp.values.astype(np.float64)
    with np.errstate(over="ignore"):
        rounded = e.astype(want_dtype)  # the correctly rounded result
    r = rounded.astype(np.float64)
    finite = np.isfinite(r)
    # NaN and the infinities must match exactly.
    bad = (np.isnan(r) != np.isnan(a)) | (~finite & ~np.isnan(r) & (a != r))
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.where(finite & np.isfinite(a), np.abs(a - e), np.inf)
        error = np.where(finite, error, 0.0)
        spacing = np.spacing(np.abs(rounded).astype(want_dtype)).astype(np.float64)
        normal = finite & (np.abs(e) >= np.finfo(want_dtype).tiny)
        rel = np.where(normal, error / np.abs(np.where(normal, e, 1)), 0.0)
        ulps = np.where(normal, error / spacing, 0.0)
    if exp.mode == "exact":
        bad |= finite & (a != r)
        if exp.signed_zeros:
            bad |= finite & (np.signbit(a) != np.signbit(r))
        allowed = np.zeros_like(e)
    elif exp.mode == "ulp":
        allowed = exp.ulp * spacing + exp.atol
        bad |= finite & (error > allowed)
    else:
        allowed = exp.slack + exp.atol
        bad |= finite & (error > allowed)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape)
        rule = {"exact": "bit-exact",
                "ulp": "%g ulp + %g" % (np.broadcast_to(exp.ulp, e.shape)[i], exp.atol),
                "sum": "accumulation bound %.3g" % (allowed[i] if finite[i] else 0)}[exp.mode]
        raise Mismatch("element %s is %r, expected %r (exact %r; error %.3g = %.3g ulp; %s)" % (
            list(i), a[i], r[i], e[i], error[i], ulps[i], rule))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(finite & (allowed > 0), error / allowed, 0.0)
    return (float(error.max(initial=0)), float(rel.max(initial=0)), float(ulps.max(initial=0)),
            float(ratio.max(initial=0)))


# ---------------------------------------------------------------------------
# Input generators: f(shape, rng) -> array.


def uniform(lo, hi, t="f32"):
    return lambda shape, rng: rng.uniform(lo, hi, size=shape).astype(np_type(t))


def magnitudes(lo_exp, hi_exp, signed=True, t="f32"):
    """sign * 10^u, u uniform in [lo_exp, hi_exp]: values over many binades."""
    def make(shape, rng):
        x = 10.0 ** rng.uniform(lo_exp, hi_exp, size=shape)
        if signed:
            x *= rng.choice([-1.0, 1.0], size=shape)
        return x.astype(np_type(t))
    return make


def mixed(*makers):
    """Each element from one of `makers`, chosen at random."""
    def make(shape, rng):
        parts = [m(shape, rng) for m in makers]
        pick = rng.integers(0, len(parts), size=shape)
        return np.choose(pick, parts).astype(parts[0].dtype)
    return make


def integers(lo, hi, t="i32"):
    return lambda shape, rng: rng.integers(lo, hi, size=shape, endpoint=True).astype(np_type(t))


def nonzero(make):
    def wrapped(shape, rng):
        x = make(shape, rng)
        x[x == 0] = 1
        return x
    return wrapped


I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1
ANY_I32 = integers(I32_MIN, I32_MAX)
SMALL_I32 = integers(-1000, 1000)
F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).tiny)  # smallest normal, 2^-126
F32_SUB = 2.0 ** -149  # smallest subnormal
INF, NAN = math.inf, math.nan


def place_specials(arrays, specials, shape_index):
    """Writes the edge values into the inputs: at the start and the end of
    each array (so both the vectorized body and the remainder see them), or
    over every other element of a short one."""
    if not specials:
        return
    n = arrays[0].size
    flat = [a.reshape(-1) for a in arrays]
    k = len(specials)
    if n >= 2 * k:
        positions = list(range(k)) + list(range(n - k, n))
        values = list(specials) + list(specials[::-1])
    else:
        positions = list(range(0, n, 2))
        values = [specials[(shape_index + j) % k] for j in range(len(positions))]
    for p, v in zip(positions, values):
        for a, x in zip(flat, v if isinstance(v, tuple) else (v,)):
            a[p] = x


# ---------------------------------------------------------------------------
# Families


class Case:
    """One run of a function of a family: make(rng) -> (inputs, [Expected]).
    (Functions with dynamic shapes have several cases, one per size.)"""

    def __init__(self, function, label, make):
        self.function = function
        self.label = label
        self.make = make


class Family:
    """One module: its name, MLIR source, cases, whether its largest error
    goes in the summary (stat "ulp") and extra compile-module flags."""

    def __init__(self, name, source, cases, stat=None, flags=()):
        self.name = name
        self.source = source
        self.cases = cases
        self.flags = list(flags)
        self.stat = stat  # "ulp": list the op's largest error in the summary


# Elementwise ops in a linalg.generic --------------------------------------

EW_SHAPES = [
    # (name, output shape, broadcast of the last operand: None, "row" or "col")
    ("1", (1,), None), ("7", (7,), None), ("13", (13,), None), ("1000", (1000,), None),
    ("7x13", (7, 13), None), ("7x13_row", (7, 13), "row"), ("7x13_col", (7, 13), "col"),
]


class Elementwise:
    """An elementwise op: operand and result element types, a body computing
    %r from %a0, %a1, ..., a float64/int64 reference, a tolerance and input
    makers (one per operand) with edge values (tuples for several operands)."""

    def __init__(self, name, types, result, body, ref, makers, specials=(), ulp=None,
                 signed_zeros=True):
        self.name = name
        self.types = types
        self.result = result
        self.body = body if isinstance(body, list) else [body]
        self.ref = ref
        self.makers = makers if isinstance(makers, list) else [makers] * len(types)
        self.specials = specials
        self.ulp = ulp
        self.mode = "ulp" if ulp is not None else "exact"
        self.stat = "ulp" if ulp is not None else None
        self.signed_zeros = signed_zeros


def generic_function(fname, in_types, in_shapes, maps, out_shape, out_t, body):
    rank = len(out_shape)
    dims = ", ".join("d%d" % i for i in range(rank))
    out_map = "affine_map<(%s) -> (%s)>" % (dims, dims)
    ins = ", ".join("%%x%d" % i for i in range(len(in_types)))
    in_tys = ", ".join(tensor_type(s, t) for s, t in zip(in_shapes, in_types))
    out_ty = tensor_type(out_shape, out_t)
    args = ", ".join("%%x%d: %s" % (i, tensor_type(s, t))
                     for i, (s, t) in enumerate(zip(in_shapes, in_types)))
    block = ", ".join(["%%a%d: %s" % (i, t) for i, t in enumerate(in_types)] + ["%%out: %s" % out_t])
    lines = [
        "func.func @%s(%s) -> %s {" % (fname, args, out_ty),
        "  %%e = tensor.empty() : %s" % out_ty,
        "  %%y = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}" % (
            ", ".join(maps + [out_map]), ", ".join(['"parallel"'] * rank)),
        "      ins(%s : %s) outs(%%e : %s) {" % (ins, in_tys, out_ty),
        "  ^bb0(%s):" % block,
    ]
    lines += ["    " + line for line in body]
    lines += ["    linalg.yield %%r : %s" % out_t, "  } -> %s" % out_ty, "  return %%y : %s" % out_ty, "}"]
    return "\n".join(lines)


def wrap_int(values, t):
    """Integers (int64) wrapped to the signed range of `t` (i8 to i32)."""
    bits = {"i8": 8, "i16": 16, "i32": 32}[t]
    v = np.asarray(values, dtype=np.int64)
    return ((v + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)).astype(np_type(t))


def elementwise_family(op):
    funcs, cases = [], []
    n = len(op.types)
    for index, (sname, out_shape, bcast) in enumerate(EW_SHAPES):
        rank = len(out_shape)
        dims = ", ".join("d%d" % i for i in range(rank))
        identity = "affine_map<(%s) -> (%s)>" % (dims, dims)
        in_shapes, maps = [out_shape] * n, [identity] * n
        if bcast:
            kept = 1 if bcast == "row" else 0
            in_shapes = in_shapes[:-1] + [(out_shape[kept],)]
            maps = maps[:-1] + ["affine_map<(%s) -> (d%d)>" % (dims, kept)]
        fname = "%s_%s" % (op.name, sname)
        funcs.append(generic_function(fname, op.types, in_shapes, maps, out_shape, op.result, op.body))

        def make(rng, in_shapes=in_shapes, out_shape=out_shape, bcast=bcast, index=index):
            inputs = [m(s, rng) for m, s in zip(op.makers, in_shapes)]
            if n == 1 or not bcast:
                place_specials(inputs, op.specials, index)
            wide = [x.astype(np.int64) if not is_float(t) and t != "i1" else
                    x.astype(np.float64) if is_float(t) else x for x, t in zip(inputs, op.types)]
            if bcast == "col":
                wide[-1] = wide[-1].reshape(-1, 1)
            with np.errstate(all="ignore"):
                values = np.broadcast_to(op.ref(*wide), out_shape)
            if not is_float(op.result) and op.result != "i1":
                values = wrap_int(values, op.result)
            atol, ulp = 0.0, 0.0
            if op.mode == "ulp":
                atol = float(np.finfo(np_type(op.result)).tiny)
                ulp = np.broadcast_to(ulp_limit(op.ulp, wide[0]), out_shape)
            return inputs, [Expected(values, np_type(op.result), op.mode, ulp=ulp, atol=atol,
                                     signed_zeros=op.signed_zeros)]
        cases.append(Case(fname, sname, make))
    return Family(op.name, "\n\n".join(funcs) + "\n", cases, op.stat)


def trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def ieee_max(a, b):
    """arith.maximumf: NaN if either is NaN, +0 above -0."""
    r = np.where(a > b, a, b)
    r = np.where((a == b) & (a == 0), np.where(np.signbit(a), b, a), r)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r)


def ieee_min(a, b):
    r = np.where(a < b, a, b)
    r = np.where((a == b) & (a == 0), np.where(np.signbit(a), a, b), r)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r)


def num_max(a, b):
    """arith.maxnumf: the other operand when one is NaN."""
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, ieee_max(a, b)))


def round_half_away(x):
    return np.where(np.isfinite(x), np.copysign(np.floor(np.abs(x) + 0.5), x), x)


def erf64(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def erfc64(x):
    return np.vectorize(math.erfc, otypes=[np.float64])(x)


F32 = ["f32"]
F32X2 = ["f32", "f32"]
I32X2 = ["i32", "i32"]
ANY_F32 = mixed(uniform(-100, 100), magnitudes(-30, 30))
BINARY_SPECIALS = [(0.0, -0.0), (-0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, INF), (INF, INF),
                   (NAN, 1.0), (1.0, NAN), (F32_SUB, 3.0), (F32_TINY, 0.5), (F32_MAX, 2.0),
                   (1.0, 1e-30), (-3.0, INF)]

NORMAL_POSITIVE = mixed(magnitudes(-37.9, 38.5, signed=False), uniform(0.5, 2.0))
POSITIVE = mixed(NORMAL_POSITIVE, magnitudes(-45, -38, signed=False))  # with subnormals
SUBNORMAL = magnitudes(-44.8, -38, signed=False)


def elementwise_ops():
    ops = []

    def binary(name, arith, ref, makers=ANY_F32, specials=BINARY_SPECIALS, signed_zeros=True):
        ops.append(Elementwise(name, F32X2, "f32", "%%r = %s %%a0, %%a1 : f32" % arith, ref,
                               makers, specials, signed_zeros=signed_zeros))

    binary("addf", "arith.addf", lambda a, b: a + b)
    binary("subf", "arith.subf", lambda a, b: a - b)
    binary("mulf", "arith.mulf", lambda a, b: a * b)
    binary("divf", "arith.divf", lambda a, b: a / b,
           specials=BINARY_SPECIALS + [(1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (1.0, -0.0), (1.0, 3.0)])
    binary("maximumf", "arith.maximumf", ieee_max)
    binary("minimumf", "arith.minimumf", ieee_min)
    # llvm.maxnum may return either zero of max(-0, +0).
    binary("maxnumf", "arith.maxnumf", num_max, signed_zeros=False)
    binary("remf", "arith.remf", np.fmod, makers=[ANY_F32, nonzero(mixed(uniform(-10, 10), magnitudes(-5, 5)))],
           specials=[(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (1e30, 3.0), (-0.0, 1.0), (0.0, -1.0),
                     (1.0, INF), (INF, 1.0), (1.0, 0.0), (NAN, 1.0), (5.0, NAN)])
    binary("copysign", "math.copysign", np.copysign)
    ops.append(Elementwise("atan2", F32X2, "f32", "%r = math.atan2 %a0, %a1 : f32", np.arctan2,
                           ANY_F32, BINARY_SPECIALS, ulp=ULP_TOLERANCE["atan2"]))
    ops.append(Elementwise(
        "powf", F32X2, "f32", "%r = math.powf %a0, %a1 : f32", np.power,
        [mixed(magnitudes(-4, 4, signed=False), uniform(0.5, 2.0)), uniform(-12, 12)],
        [(0.0, 2.0), (2.0, 0.0), (-2.0, 3.0), (-2.0, 0.5), (1.0, NAN), (NAN, 0.0), (INF, -1.0),
         (0.0, -1.0), (2.0, 128.0), (2.0, -149.0), (10.0, 38.5), (-0.0, -3.0), (0.5, INF)],
        ulp=ULP_TOLERANCE["powf"]))
    ops.append(Elementwise("negf", F32, "f32", "%r = arith.negf %a0 : f32", lambda a: -a, ANY_F32,
                           [0.0, -0.0, INF, -INF, NAN, F32_SUB, F32_MAX]))
    ops.append(Elementwise("select_olt", F32X2, "f32",
                           ["%c = arith.cmpf olt, %a0, %a1 : f32", "%r = arith.select %c, %a0, %a1 : f32"],
                           lambda a, b: np.where(a < b, a, b), ANY_F32, BINARY_SPECIALS))
    ops.append(Elementwise("fma", ["f32", "f32", "f32"], "f32", "%r = math.fma %a0, %a1, %a2 : f32",
                           lambda a, b, c: a * b + c, ANY_F32,
                           [(1.0 + 2 ** -23, 1.0 - 2 ** -23, -1.0), (3.0, 0.1, -0.3), (INF, 0.0, 1.0),
                            (NAN, 1.0, 1.0), (-0.0, 1.0, 0.0), (F32_MAX, 2.0, -F32_MAX)],
                           ulp=0.5))

    unary_specials = [0.0, -0.0, INF, -INF, NAN]

    def math1(name, ref, makers, specials):
        """A math op on f32: within ULP_TOLERANCE[name], or exact if not listed."""
        ops.append(Elementwise(name, F32, "f32", "%%r = math.%s %%a0 : f32" % name, ref, makers, specials,
                               ulp=ULP_TOLERANCE.get(name)))

    math1("exp", np.exp, mixed(uniform(-104, 89), magnitudes(-30, 1.9)),
          unary_specials + [1.0, -1.0, 1e-30, -1e-30, 88.72, 88.73, -87.3, -95.0, -103.9, -104.0,
                            -200.0, 200.0, 0.5, -0.5, 10.0])
    math1("exp2", np.exp2, mixed(uniform(-150, 128), magnitudes(-30, 2)),
          unary_specials + [1.0, 127.99, 128.0, -126.0, -140.0, -149.0, -150.0, 0.5])
    math1("expm1", np.expm1, mixed(uniform(-20, 88), magnitudes(-30, 0), uniform(-1, 1)),
          unary_specials + [1e-10, -1e-10, 1e-5, -1e-5, 0.3, -0.3, 0.7, -0.7, 88.7, 89.0, -20.0, -100.0,
                            2 ** -20, -(2 ** -20)])
    math1("log", np.log, NORMAL_POSITIVE,
          unary_specials + [1.0, 1.0 + 2 ** -23, 1.0 - 2 ** -24, 2.0, 0.5, -1.0, F32_MAX, F32_TINY,
                            1.0001, 0.9999, math.e, -F32_SUB])
    math1("log2", np.log2, NORMAL_POSITIVE,
          unary_specials + [1.0, 2.0, 0.5, 1024.0, 2.0 ** -126, 2.0 ** 127, 1.0 + 2 ** -23,
                            1.0 - 2 ** -24, -1.0, F32_MAX, 3.0, 0.999])
    # Subnormal inputs apart (upstream clamps them; the compiler scales them first).
    for name, ref in [("log", np.log), ("log2", np.log2)]:
        ops.append(Elementwise(name + "_subnormal", F32, "f32", "%%r = math.%s %%a0 : f32" % name, ref,
                               SUBNORMAL, [F32_SUB, 1e-40, 2.0 ** -127], ulp=ULP_TOLERANCE[name]))
    math1("log10", np.log10, POSITIVE, unary_specials + [1.0, 10.0, 1000.0, 0.1, -1.0, F32_MAX])
    math1("log1p", np.log1p, mixed(magnitudes(-30, 38, signed=False), uniform(-1, 1), magnitudes(-30, 0)),
          unary_specials + [-1.0, -2.0, 1e-10, -1e-10, 2 ** -20, -0.5, 0.5, 1.0, -0.9999999,
                            F32_MAX, 1e-3, -1e-3, math.e - 1])
    math1("tanh", np.tanh, mixed(uniform(-20, 20), magnitudes(-30, 2)),
          unary_specials + [1e-10, -1e-10, 0.5, -0.5, 0.0004, -0.0004, 0.625, -0.625, 9.0, -9.0, 10.0, -10.0,
                            100.0, -100.0, 1e-3])
    math1("erf", erf64, mixed(uniform(-6, 6), magnitudes(-30, 2)),
          unary_specials + [1e-10, -1e-10, 0.5, -0.5, 0.84375, 1.25, -1.25, 2.0, 3.9, -4.0, 10.0, -10.0, 1e-3])
    math1("erfc", erfc64, mixed(uniform(-4, 9), magnitudes(-30, 1)),
          unary_specials + [1e-10, 0.5, -0.5, 2.0, 5.0, 9.0, 10.0, -10.0])
    math1("sqrt", np.sqrt, POSITIVE,
          unary_specials + [-1.0, 1.0, 2.0, 4.0, F32_MAX, F32_SUB, F32_TINY, 1e-40])
    math1("rsqrt", lambda x: 1.0 / np.sqrt(x), POSITIVE,
          unary_specials + [-1.0, 1.0, 4.0, 0.25, F32_MAX, F32_SUB, F32_TINY, 1e-40])
    math1("sin", np.sin, mixed(uniform(-10, 10), magnitudes(-30, 5)),
          unary_specials + [math.pi, -math.pi, 1e-10, 1e4, 1e5, 3.0e38, 1.5707964])
    math1("cos", np.cos, mixed(uniform(-10, 10), magnitudes(-30, 5)),
          unary_specials + [math.pi, -math.pi, 1e-10, 1e4, 1e5, 3.0e38, 1.5707964])
    math1("tan", np.tan, mixed(uniform(-10, 10), magnitudes(-30, 4)), unary_specials + [1.5707964, 1e-10])
    math1("atan", np.arctan, ANY_F32, unary_specials + [1.0, -1.0, 1e-10, 1e30])
    math1("sinh", np.sinh, mixed(uniform(-89, 89), magnitudes(-30, 1)), unary_specials + [89.5, -89.5, 1e-10])
    math1("cosh", np.cosh, mixed(uniform(-89, 89), magnitudes(-30, 1)), unary_specials + [89.5, -89.5, 1e-10])
    math1("cbrt", np.cbrt, ANY_F32, unary_specials + [8.0, -27.0, F32_SUB, F32_MAX])
    halves = lambda shape, rng: (rng.integers(-40, 40, size=shape) * 0.5).astype(np.float32)
    rounding = mixed(uniform(-10, 10), magnitudes(-3, 9), halves)
    rounding_specials = unary_specials + [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997,
                                          8388607.5, -8388607.5, 8388609.0, 1e30, -1e30, F32_SUB, -F32_SUB]
    math1("absf", np.abs, ANY_F32, unary_specials + [F32_SUB, -F32_SUB, -F32_MAX])
    math1("floor", np.floor, rounding, rounding_specials)
    math1("ceil", np.ceil, rounding, rounding_specials)
    math1("trunc", np.trunc, rounding, rounding_specials)
    math1("round", round_half_away, rounding, rounding_specials)
    math1("roundeven", np.rint, rounding, rounding_specials)

    # f16: computed in f32 and rounded back.
    f16 = lambda lo, hi: uniform(lo, hi, "f16")
    ops.append(Elementwise("addf_f16", ["f16", "f16"], "f16", "%r = arith.addf %a0, %a1 : f16",
                           lambda a, b: a + b, f16(-1000, 1000),
                           [(65504.0, 32.0), (65504.0, 16.0), (INF, -INF), (NAN, 1.0), (-0.0, -0.0),
                            (6e-8, 6e-8), (0.0, -0.0)]))
    ops.append(Elementwise("mulf_f16", ["f16", "f16"], "f16", "%r = arith.mulf %a0, %a1 : f16",
                           lambda a, b: a * b, f16(-300, 300), [(300.0, 300.0), (6e-8, 0.5), (-0.0, 1.0)]))
    ops.append(Elementwise("exp_f16", ["f16"], "f16", "%r = math.exp %a0 : f16", np.exp,
                           mixed(f16(-17, 11.2), f16(-1, 1)),
                           unary_specials + [11.09, 11.1, -9.7, -16.6, -17.4, 1.0, 1e-3],
                           ulp=ULP_TOLERANCE["exp_f16"]))
    ops.append(Elementwise("tanh_f16", ["f16"], "f16", "%r = math.tanh %a0 : f16", np.tanh,
                           mixed(f16(-6, 6), f16(-0.01, 0.01)), unary_specials + [1e-4, 5.0, -5.0],
                           ulp=ULP_TOLERANCE["tanh_f16"]))

    # f64: exact operations and libm.
    f64 = mixed(uniform(-100, 100, "f64"), magnitudes(-300, 300, t="f64"))
    ops.append(Elementwise("addf_f64", ["f64", "f64"], "f64", "%r = arith.addf %a0, %a1 : f64",
                           lambda a, b: a + b, f64, [(INF, -INF), (NAN, 1.0), (-0.0, -0.0), (1e308, 1e308)]))
    ops.append(Elementwise("divf_f64", ["f64", "f64"], "f64", "%r = arith.divf %a0, %a1 : f64",
                           lambda a, b: a / b, f64, [(1.0, 0.0), (0.0, 0.0), (1.0, 3.0)]))
    ops.append(Elementwise("exp_f64", ["f64"], "f64", "%r = math.exp %a0 : f64", np.exp,
                           mixed(uniform(-745, 710, "f64"), magnitudes(-30, 2, t="f64")),
                           unary_specials + [709.78, 709.79, -708.0, 1e-300], ulp=ULP_TOLERANCE["exp_f64"]))

    # Powers with an integer exponent (math-to-funcs helpers).
    small_ints = integers(-6, 6)
    ops.append(Elementwise("fpowi", ["f32", "i32"], "f32", "%r = math.fpowi %a0, %a1 : f32, i32",
                           lambda a, b: a ** b, [uniform(-3, 3), small_ints], ulp=ULP_TOLERANCE["fpowi"]))
    ops.append(Elementwise("ipowi", I32X2, "i32", "%r = math.ipowi %a0, %a1 : i32",
                           lambda a, b: np.where(b >= 0, a ** np.maximum(b, 0),
                                                 np.where(a == 1, 1, np.where(a == -1, 1 - 2 * (b % 2), 0))),
                           [integers(-9, 9), integers(0, 9)],
                           # Negative exponents (of bases other than 0, for which the op divides by zero).
                           [(1, -3), (-1, -3), (-1, -4), (2, -1), (-5, -2), (3, 19), (-3, 20), (7, 0)]))

    # Conversions.
    ops.append(Elementwise("extf_f16", ["f16"], "f32", "%r = arith.extf %a0 : f16 to f32", lambda a: a,
                           f16(-65504, 65504), unary_specials + [6e-8, -6e-8, 65504.0]))
    ops.append(Elementwise("truncf_f16", F32, "f16", "%r = arith.truncf %a0 : f32 to f16", lambda a: a,
                           mixed(uniform(-70000, 70000), magnitudes(-9, 4)),
                           unary_specials + [65504.0, 65519.0, 65520.0, 1e-8, 3e-8, 2049.0, 2051.0, -2051.0]))
    ops.append(Elementwise("sitofp", ["i32"], "f32", "%r = arith.sitofp %a0 : i32 to f32",
                           lambda a: a.astype(np.float64), ANY_I32,
                           [0, 1, -1, I32_MIN, I32_MAX, 16777217, -16777217, 16777219, 33554434]))
    ops.append(Elementwise("uitofp", ["i32"], "f32", "%r = arith.uitofp %a0 : i32 to f32",
                           lambda a: (a % 2 ** 32).astype(np.float64), ANY_I32,
                           [0, 1, -1, I32_MIN, I32_MAX, 16777217]))
    ops.append(Elementwise("fptosi", F32, "i32", "%r = arith.fptosi %a0 : f32 to i32", np.trunc,
                           mixed(uniform(-100, 100), magnitudes(-3, 9.3)),
                           [0.0, -0.0, 0.5, -0.5, 0.99999994, -0.99999994, 1.5, -1.5, 2147483520.0,
                            -2147483648.0, 16777217.0]))
    ops.append(Elementwise("bitcast_f32_i32", F32, "i32", "%r = arith.bitcast %a0 : f32 to i32",
                           lambda a: a.astype(np.float32).view(np.int32).astype(np.int64), ANY_F32,
                           [0.0, -0.0, INF, -INF, 1.0, F32_SUB]))
    ops.append(Elementwise("extsi_i8", ["i8"], "i32", "%r = arith.extsi %a0 : i8 to i32", lambda a: a,
                           integers(-128, 127, "i8"), [-128, 127, -1, 0]))
    ops.append(Elementwise("extui_i8", ["i8"], "i32", "%r = arith.extui %a0 : i8 to i32", lambda a: a % 256,
                           integers(-128, 127, "i8"), [-128, 127, -1, 0]))
    ops.append(Elementwise("trunci_i8", ["i32"], "i8", "%r = arith.trunci %a0 : i32 to i8", lambda a: a,
                           ANY_I32, [255, 256, -129, 128, I32_MIN, I32_MAX]))
    ops.append(Elementwise("trunci_i1", ["i32"], "i1", "%r = arith.trunci %a0 : i32 to i1",
                           lambda a: (a & 1).astype(bool), ANY_I32, [0, 1, 2, 3, -1, I32_MIN]))
    ops.append(Elementwise("extui_i1", ["i1"], "i32", "%r = arith.extui %a0 : i1 to i32",
                           lambda a: a.astype(np.int64), lambda s, r: r.integers(0, 2, size=s).astype(bool)))
    ops.append(Elementwise("extsi_i1", ["i1"], "i32", "%r = arith.extsi %a0 : i1 to i32",
                           lambda a: -a.astype(np.int64), lambda s, r: r.integers(0, 2, size=s).astype(bool)))

    # Integers (i32, wrapping).
    def ibinary(name, ref, makers=ANY_I32, specials=()):
        ops.append(Elementwise(name, I32X2, "i32", "%%r = arith.%s %%a0, %%a1 : i32" % name, ref,
                               makers, specials))

    int_specials = [(I32_MAX, 1), (I32_MIN, -1), (I32_MIN, I32_MIN), (0, 0), (-1, -1), (I32_MAX, I32_MAX)]
    ibinary("addi", lambda a, b: a + b, specials=int_specials)
    ibinary("subi", lambda a, b: a - b, specials=int_specials)
    ibinary("muli", lambda a, b: a * b, specials=int_specials + [(65536, 65536), (-65536, 32768)])
    divisor = nonzero(mixed(SMALL_I32, ANY_I32))
    div_specials = [(7, 2), (-7, 2), (7, -2), (-7, -2), (I32_MIN, 1), (I32_MAX, -1), (0, -5), (1, I32_MIN)]
    ibinary("divsi", trunc_div, [ANY_I32, divisor], div_specials)
    ibinary("remsi", lambda a, b: a - b * trunc_div(a, b), [ANY_I32, divisor], div_specials)
    ibinary("floordivsi", lambda a, b: a // b, [ANY_I32, divisor], div_specials)
    ibinary("ceildivsi", lambda a, b: -((-a) // b), [ANY_I32, divisor], div_specials)
    ibinary("divui", lambda a, b: (a % 2 ** 32) // (b % 2 ** 32), [ANY_I32, divisor], div_specials)
    ibinary("remui", lambda a, b: (a % 2 ** 32) % (b % 2 ** 32), [ANY_I32, divisor], div_specials)
    ibinary("andi", lambda a, b: a & b)
    ibinary("ori", lambda a, b: a | b)
    ibinary("xori", lambda a, b: a ^ b)
    shift = integers(0, 31)
    shift_specials = [(1, 31), (-1, 31), (I32_MIN, 1), (I32_MAX, 0), (-8, 1)]
    ibinary("shli", lambda a, b: a << b, [ANY_I32, shift], shift_specials)
    ibinary("shrsi", lambda a, b: a >> b, [ANY_I32, shift], shift_specials)
    ibinary("shrui", lambda a, b: (a % 2 ** 32) >> b, [ANY_I32, shift], shift_specials)
    ibinary("maxsi", np.maximum, specials=int_specials)
    ibinary("minsi", np.minimum, specials=int_specials)
    ibinary("maxui", lambda a, b: np.maximum(a % 2 ** 32, b % 2 ** 32), specials=int_specials)
    ibinary("minui", lambda a, b: np.minimum(a % 2 ** 32, b % 2 ** 32), specials=int_specials)
    ops.append(Elementwise("select_slt", I32X2, "i32",
                           ["%c = arith.cmpi slt, %a0, %a1 : i32", "%r = arith.select %c, %a0, %a1 : i32"],
                           lambda a, b: np.where(a < b, a, b), SMALL_I32))

    # i1 results and operands.
    cmpf_specials = BINARY_SPECIALS + [(1.0, 1.0), (2.0, 1.0)]
    for pred, ref in [("olt", lambda a, b: a < b), ("oeq", lambda a, b: a == b),
                      ("une", lambda a, b: ~(a == b)), ("uge", lambda a, b: ~(a < b)),
                      ("ord", lambda a, b: ~np.isnan(a) & ~np.isnan(b))]:
        ops.append(Elementwise("cmpf_" + pred, F32X2, "i1", "%%r = arith.cmpf %s, %%a0, %%a1 : f32" % pred,
                               ref, mixed(ANY_F32, integers(-2, 2, "f32")), cmpf_specials))
    for pred, ref in [("slt", lambda a, b: a < b), ("ult", lambda a, b: (a % 2 ** 32) < (b % 2 ** 32)),
                      ("eq", lambda a, b: a == b), ("sge", lambda a, b: a >= b)]:
        ops.append(Elementwise("cmpi_" + pred, I32X2, "i1", "%%r = arith.cmpi %s, %%a0, %%a1 : i32" % pred,
                               ref, mixed(ANY_I32, integers(-2, 2)), int_specials))
    bools = lambda s, r: r.integers(0, 2, size=s).astype(bool)
    ops.append(Elementwise("select_i1", ["i1", "f32", "f32"], "f32", "%r = arith.select %a0, %a1, %a2 : f32",
                           lambda c, a, b: np.where(c, a, b), [bools, ANY_F32, ANY_F32]))
    ops.append(Elementwise("xori_i1", ["i1", "i1"], "i1", "%r = arith.xori %a0, %a1 : i1",
                           lambda a, b: a ^ b, bools))
    ops.append(Elementwise("andi_i1", ["i1", "i1"], "i1", "%r = arith.andi %a0, %a1 : i1",
                           lambda a, b: a & b, bools))
    families = [elementwise_family(op) for op in ops]
    # Also for the baseline CPU, where f16 has no conversion instructions.
    f16_add = [f for f in families if f.name == "addf_f16"][0]
    families.append(Family("addf_f16_generic_cpu", f16_add.source, f16_add.cases, flags=["--cpu=generic"]))
    return families


# Linalg named ops ------------------------------------------------------------

NEG_INF = "0xFF800000"
POS_INF = "0x7F800000"


def function(name, args, results, body):
    """A func.func: args as [(name, type)], results as [(value, type)]."""
    lines = ["func.func @%s(%s) -> (%s) {" % (
        name, ", ".join("%%%s: %s" % a for a in args), ", ".join(t for _, t in results))]
    lines += ["  " + line for line in body]
    lines.append("  return %s : %s" % (", ".join(v for v, _ in results), ", ".join(t for _, t in results)))
    lines.append("}")
    return "\n".join(lines)


def init(name, shape, value=None, t="f32"):
    """Lines making %name: an empty tensor, filled with `value` (MLIR literal) if given."""
    ty = tensor_type(shape, t)
    if value is None:
        return ["%%%s = tensor.empty() : %s" % (name, ty)]
    return ["%%%s_e = tensor.empty() : %s" % (name, ty),
            "%%%s_v = arith.constant %s : %s" % (name, value, t),
            "%%%s = linalg.fill ins(%%%s_v : %s) outs(%%%s_e : %s) -> %s" % (name, name, t, name, ty, ty)]


def rand(shape, rng, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def f64(*arrays):
    return [a.astype(np.float64) for a in arrays]


def summed(values, abs_sum, count, dtype=np.float32):
    """An accumulated result: within the rounding bound of `count` terms."""
    return Expected(values, dtype, "sum", slack=sum_bound(abs_sum, count), atol=1e-30)


def family(name, functions, cases, stat=None):
    return Family(name, "\n\n".join(functions) + "\n", cases, stat)


def contraction_family(name, op_text, shape_sets, a_shape, b_shape, out_shape, ref, count, acc=False,
                       operands="f32"):
    """matmul-like ops: op_text is the op up to `ins(`; shapes are functions of a shape set.
    The operands are of type `operands` (f32 or f16), the result f32."""
    functions, cases = [], []
    for dims in shape_sets:
        fname = "%s_%s" % (name.replace(".", "_"), "x".join(str(d) for d in dims))
        label = "%s * %s" % (shape_name(a_shape(*dims)), shape_name(b_shape(*dims)))
        at, bt = (tensor_type(f(*dims), operands) for f in (a_shape, b_shape))
        ot = tensor_type(out_shape(*dims), "f32")
        args = [("a", at), ("b", bt)] + ([("c", ot)] if acc else [])
        body = ([] if acc else init("c", out_shape(*dims), "0.0"))
        body.append("%%r = %s ins(%%a, %%b : %s, %s) outs(%%c : %s) -> %s" % (op_text, at, bt, ot, ot))
        functions.append(function(fname, args, [("%r", ot)], body))

        def make(rng, dims=dims):
            inputs = [rand(a_shape(*dims), rng).astype(np_type(operands)),
                      rand(b_shape(*dims), rng).astype(np_type(operands))]
            c = rand(out_shape(*dims), rng) if acc else np.zeros(out_shape(*dims), np.float32)
            if acc:
                inputs.append(c)
            a, b, c64 = f64(inputs[0], inputs[1], c)
            values = ref(a, b) + c64
            abs_sum = ref(np.abs(a), np.abs(b)) + np.abs(c64)
            return inputs, [summed(values, abs_sum, count(*dims) + 1)]
        cases.append(Case(fname, label, make))
    return family(name, functions, cases)


MATMUL_SHAPES = [(1, 1, 1), (7, 7, 7), (13, 13, 13), (1, 1000, 7), (13, 7, 1000), (1000, 13, 7),
                 (7, 1, 13), (1, 13, 1000), (13, 1000, 13), (1000, 1, 1), (1000, 7, 1000),
                 # tiled in workgroup memory on GPUs: M not a multiple of the tile, N of 128 and 64
                 (200, 128, 40), (256, 192, 64),
                 # blocked for the caches on CPUs: whole 256 x 256 blocks of the right-hand side
                 # packed in the runtime's local memory (three workgroups of 128 rows; then
                 # 128, 128 and 44), then blocks that do not divide N and K, read in place
                 (384, 512, 768), (300, 512, 768), (256, 320, 600),
                 # and from 2048 rows: workgroups of 512 rows, blocks 512 deep
                 (2048, 256, 1024),
                 # from 1024 rows and columns: workgroups of 512 x 512 tiles, 2 x 2 of them
                 (1024, 1024, 600)]
MT_SHAPES = [(1, 1, 1), (7, 13, 1), (13, 7, 1000), (1000, 13, 7), (1, 1000, 13)]


def matmul_maps(a, b):
    return ("indexing_maps = [affine_map<(m, n, k) -> (%s)>, affine_map<(m, n, k) -> (%s)>, "
            "affine_map<(m, n, k) -> (m, n)>]" % (a, b))


def contraction_families():
    mm = lambda a, b: a @ b
    M = lambda m, n, k: (m, k)
    K = lambda m, n, k: (k, n)
    O = lambda m, n, k: (m, n)
    count = lambda m, n, k: k
    fams = [
        contraction_family("linalg.matmul", "linalg.matmul", MATMUL_SHAPES, M, K, O, mm, count),
        contraction_family("linalg.matmul_acc", "linalg.matmul", [(1, 1, 1), (7, 13, 1000), (1000, 7, 13), (96, 64, 24), (256, 512, 512)],
                           M, K, O, mm, count, acc=True),
        # In workgroup-memory tiles on GPUs at any tile count (as for a GPU of few
        # multiprocessors): K not a multiple of the step of 8 (the last step's elements past K
        # zero), N not a multiple of 64 (the last tile's columns past N masked).
        contraction_family("linalg.matmul_partial_tiles", "linalg.matmul",
                           [(100, 128, 37), (200, 96, 40), (64, 160, 13)], M, K, O, mm, count),
        # f16 operands accumulated in f32: on NVIDIA GPUs (sm_80 and later) the shapes with N
        # of 64 or more, a multiple of 8, and K a multiple of 32 run on the tensor cores
        # (mma.sync), M past the tile masked, and N past it (96).
        contraction_family("linalg.matmul_f16", "linalg.matmul",
                           [(7, 13, 20), (200, 128, 64), (256, 192, 96), (33, 64, 1024), (256, 96, 64)],
                           M, K, O, mm, count, operands="f16"),
        contraction_family("linalg.matmul_ta", "linalg.matmul " + matmul_maps("k, m", "k, n"), MT_SHAPES,
                           lambda m, n, k: (k, m), K, O, lambda a, b: a.T @ b, count),
        contraction_family("linalg.matmul_tb", "linalg.matmul " + matmul_maps("m, k", "n, k"), MT_SHAPES,
                           M, lambda m, n, k: (n, k), O, lambda a, b: a @ b.T, count),
        contraction_family("linalg.matmul_tab", "linalg.matmul " + matmul_maps("k, m", "n, k"), MT_SHAPES,
                           lambda m, n, k: (k, m), lambda m, n, k: (n, k), O, lambda a, b: a.T @ b.T, count),
        contraction_family(
            "linalg.contract_tb",
            "linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
            "affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]",
            MT_SHAPES, M, lambda m, n, k: (n, k), O, lambda a, b: a @ b.T, count),
    ]
    partial = next(f for f in fams if f.name == "linalg.matmul_partial_tiles")
    partial.flags = ["--gpu-codegen-options=fma-tiles-from=1"]
    bm = lambda a, b: np.einsum("bmk,bkn->bmn", a, b)
    bshapes = [(1, 1, 1, 1), (3, 7, 13, 1), (2, 13, 7, 1000), (7, 1, 1000, 13), (13, 7, 1, 7)]
    fams.append(contraction_family("linalg.batch_matmul", "linalg.batch_matmul", bshapes,
                                   lambda b, m, n, k: (b, m, k), lambda b, m, n, k: (b, k, n),
                                   lambda b, m, n, k: (b, m, n), bm, lambda b, m, n, k: k))
    fams.append(contraction_family(
        "linalg.batch_matmul_tb",
        "linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, "
        "affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]",
        [(1, 1, 1, 1), (3, 7, 13, 1000), (2, 13, 7, 7)],
        lambda b, m, n, k: (b, m, k), lambda b, m, n, k: (b, n, k), lambda b, m, n, k: (b, m, n),
        lambda a, b: np.einsum("bmk,bnk->bmn", a, b), lambda b, m, n, k: k))
    fams.append(contraction_family(
        "linalg.batch_reduce_matmul", "linalg.batch_reduce_matmul",
        [(1, 1, 1, 1), (3, 7, 13, 5), (13, 7, 1, 1000)],
        lambda b, m, n, k: (b, m, k), lambda b, m, n, k: (b, k, n), lambda b, m, n, k: (m, n),
        lambda a, b: np.einsum("bmk,bkn->mn", a, b), lambda b, m, n, k: b * k))
    fams.append(contraction_family(
        "linalg.matvec", "linalg.matvec", [(1, 1), (7, 13), (1000, 7), (13, 1000)],
        lambda m, n: (m, n), lambda m, n: (n,), lambda m, n: (m,), lambda a, b: a @ b, lambda m, n: n))
    fams.append(contraction_family(
        "linalg.vecmat", "linalg.vecmat", [(1, 1), (7, 13), (1000, 7), (13, 1000)],
        lambda m, n: (m,), lambda m, n: (m, n), lambda m, n: (n,), lambda a, b: a @ b, lambda m, n: m))
    fams.append(contraction_family(
        "linalg.batch_matvec", "linalg.batch_matvec", [(1, 1, 1), (3, 7, 13), (2, 13, 1000)],
        lambda b, m, n: (b, m, n), lambda b, m, n: (b, n), lambda b, m, n: (b, m),
        lambda a, b: np.einsum("bmn,bn->bm", a, b), lambda b, m, n: n))
    fams.append(contraction_family(
        "linalg.dot", "linalg.dot", [(1,), (7,), (13,), (1000,)],
        lambda n: (n,), lambda n: (n,), lambda n: (), lambda a, b: np.asarray(a @ b), lambda n: n))
    return fams


# Convolutions and pooling: NHWC input, HWCF filter, then other layouts by
# transposing to and from it.


def out_size(size, k, stride, dilation):
    return (size - dilation * (k - 1) - 1) // stride + 1


def taps(x, kh, kw, stride, dilation):
    """For each filter tap (i, j): the input window x[n, oh*s + i*d, ow*s + j*d, ...]."""
    (sh, sw), (dh, dw) = stride, dilation
    oh = out_size(x.shape[1], kh, sh, dh)
    ow = out_size(x.shape[2], kw, sw, dw)
    for i in range(kh):
        for j in range(kw):
            yield i, j, x[:, i * dh: i * dh + (oh - 1) * sh + 1: sh, j * dw: j * dw + (ow - 1) * sw + 1: sw]


def conv_nhwc_hwcf(x, w, stride, dilation):
    return sum(np.einsum("nhwc,cf->nhwf", window, w[i, j])
               for i, j, window in taps(x, w.shape[0], w.shape[1], stride, dilation))


def depthwise_nhwc_hwcm(x, w, stride, dilation):
    return sum(np.einsum("nhwc,cm->nhwcm", window, w[i, j])
               for i, j, window in taps(x, w.shape[0], w.shape[1], stride, dilation))


def pool_nhwc(x, kh, kw, stride, dilation, reduce):
    windows = [window for _, _, window in taps(x, kh, kw, stride, dilation)]
    return reduce(np.stack(windows), axis=0)


def conv3d_ndhwc_dhwcf(x, w, out_depth):
    """Unit stride and dilation: each depth tap is a 2-D convolution of a slab."""
    n, _, h, wd, c = x.shape
    total = 0
    for i in range(w.shape[0]):
        slab = x[:, i:i + out_depth].reshape(n * out_depth, h, wd, c)
        total = total + conv_nhwc_hwcf(slab, w[i], (1, 1), (1, 1))
    return total.reshape((n, out_depth) + total.shape[1:])


def conv3d_make(x_shape, w_shape, out_shape):
    def make(rng):
        x, w = rand(x_shape, rng), rand(w_shape, rng)
        a, b = f64(x, w)
        values = conv3d_ndhwc_dhwcf(a, b, out_shape[1])
        bound = conv3d_ndhwc_dhwcf(np.abs(a), np.abs(b), out_shape[1])
        return [x, w], [summed(values, bound, int(np.prod(w_shape[:4])))]
    return make


def conv_attrs(stride, dilation):
    return "{dilations = dense<[%d, %d]> : tensor<2xi64>, strides = dense<[%d, %d]> : tensor<2xi64>}" % (
        dilation + stride)


def conv_case(name, op, x_shape, w_shape, out_shape, stride, dilation, ref, count, label):
    """One function: op with conv_attrs, input and filter arguments, zero-filled output."""
    xt, wt, ot = (tensor_type(s, "f32") for s in (x_shape, w_shape, out_shape))
    body = init("o", out_shape, "0.0")
    body.append("%%r = linalg.%s %s ins(%%x, %%w : %s, %s) outs(%%o : %s) -> %s" % (
        op, conv_attrs(stride, dilation), xt, wt, ot, ot))
    text = function(name, [("x", xt), ("w", wt)], [("%r", ot)], body)

    def make(rng):
        x, w = rand(x_shape, rng), rand(w_shape, rng)
        a, b = f64(x, w)
        values = ref(a, b, stride, dilation)
        assert values.shape == tuple(out_shape), (name, values.shape, out_shape)
        return [x, w], [summed(values, ref(np.abs(a), np.abs(b), stride, dilation), count)]
    return text, Case(name, label, make)


# (N, H, W, C), (KH, KW), F, stride, dilation
CONV_SHAPES = [
    ((1, 7, 13, 3), (3, 3), 5, (1, 1), (1, 1)),
    ((2, 13, 7, 1), (3, 3), 7, (2, 2), (1, 1)),
    ((1, 13, 13, 7), (3, 3), 13, (1, 1), (2, 2)),
    ((1, 13, 13, 3), (2, 2), 7, (2, 2), (2, 2)),
    ((1, 7, 13, 3), (3, 5), 5, (2, 1), (1, 2)),
    ((1, 7, 7, 13), (1, 1), 1, (1, 1), (1, 1)),
    ((1, 1, 1, 1), (1, 1), 1, (1, 1), (1, 1)),
    ((1, 1, 1000, 3), (1, 7), 13, (1, 1), (1, 1)),
]


def conv_label(xs, k, f, s, d):
    return "%s*%dx%dx%d s%d%d d%d%d" % (shape_name(xs), k[0], k[1], f, s[0], s[1], d[0], d[1])


def conv_epilogue_family():
    """A convolution of a dynamic batch with its bias, a residual and a ReLU in the kernel, as a
    ResNet's; in f32, and with f16 inputs and filter summed in f32 (NVIDIA's tensor cores)."""
    functions, cases = [], []
    n, h, w, c, f = 2, 18, 18, 32, 64
    oh, ow = h - 2, w - 2
    for t in ("f32", "f16"):
        xt, wt = "tensor<?x%dx%dx%dx%s>" % (h, w, c, t), tensor_type((3, 3, c, f), t)
        bt, ot = tensor_type((f,), "f32"), "tensor<?x%dx%dx%dxf32>" % (oh, ow, f)
        ident = "affine_map<(n, h, w, f) -> (n, h, w, f)>"
        body = ["%c0 = arith.constant 0 : index",
                "%n = tensor.dim %x, %c0 : " + xt,
                "%e = tensor.empty(%n) : " + ot,
                "%z = arith.constant 0.0 : f32",
                "%%o = linalg.fill ins(%%z : f32) outs(%%e : %s) -> %s" % (ot, ot),
                "%%c = linalg.conv_2d_nhwc_hwcf %s ins(%%x, %%w : %s, %s) outs(%%o : %s) -> %s" % (
                    conv_attrs((1, 1), (1, 1)), xt, wt, ot, ot),
                "%%r = linalg.generic {indexing_maps = [%s, affine_map<(n, h, w, f) -> (f)>, %s, %s], "
                "iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]} "
                "ins(%%c, %%b, %%res : %s, %s, %s) outs(%%e : %s) {" % (ident, ident, ident, ot, bt, ot, ot),
                "^bb0(%in: f32, %bias: f32, %skip: f32, %out: f32):",
                "  %s = arith.addf %in, %bias : f32",
                "  %u = arith.addf %s, %skip : f32",
                "  %v = arith.maximumf %u, %z : f32",
                "  linalg.yield %v : f32",
                "} -> " + ot]
        name = "conv_bias_residual_relu_%s" % t
        functions.append(function(name, [("x", xt), ("w", wt), ("b", bt), ("res", ot)], [("%r", ot)], body))

        def make(rng, t=t):
            x, wgt = rand((n, h, w, c), rng), rand((3, 3, c, f), rng)
            bias, skip = rand((f,), rng), rand((n, oh, ow, f), rng)
            if t == "f16":
                x, wgt = x.astype(np.float16), wgt.astype(np.float16)
            a, b, bb, ss = f64(x, wgt, bias, skip)
            values = np.maximum(conv_nhwc_hwcf(a, b, (1, 1), (1, 1)) + bb + ss, 0)
            bound = conv_nhwc_hwcf(np.abs(a), np.abs(b), (1, 1), (1, 1)) + np.abs(bb) + np.abs(ss)
            return [x, wgt, bias, skip], [summed(values, bound, 9 * c + 2)]
        cases.append(Case(name, "?x%dx%dx%d *3x3x%d + bias + residual, relu, %s operands, batch %d" % (
            h, w, c, f, t, n), make))
    # Sums that start from a binding's values (TOSA's bias, broadcast by another kernel, is the
    # convolution's initial output), f32, dynamic batch.
    xt, wt = "tensor<?x%dx%dx%dxf32>" % (h, w, c), tensor_type((3, 3, c, f), "f32")
    ot = "tensor<?x%dx%dx%dxf32>" % (oh, ow, f)
    functions.append(function("conv_accumulate", [("x", xt), ("w", wt), ("init", ot)], [("%r", ot)], [
        "%%r = linalg.conv_2d_nhwc_hwcf %s ins(%%x, %%w : %s, %s) outs(%%init : %s) -> %s" % (
            conv_attrs((1, 1), (1, 1)), xt, wt, ot, ot)]))

    def accumulate(rng):
        x, wgt, init = rand((n, h, w, c), rng), rand((3, 3, c, f), rng), rand((n, oh, ow, f), rng)
        a, b, i = f64(x, wgt, init)
        values = conv_nhwc_hwcf(a, b, (1, 1), (1, 1)) + i
        bound = conv_nhwc_hwcf(np.abs(a), np.abs(b), (1, 1), (1, 1)) + np.abs(i)
        return [x, wgt, init], [summed(values, bound, 9 * c + 1)]
    cases.append(Case("conv_accumulate", "?x%dx%dx%d *3x3x%d into initial values, batch %d" % (
        h, w, c, f, n), accumulate))
    return family("convolution epilogues", functions, cases)


def conv_families():
    fams = []

    def build(opname, shapes, layout, name=None):
        functions, cases = [], []
        name = name or opname
        for index, (xs, k, f, s, d) in enumerate(shapes):
            n, h, w, c = xs
            oh, ow = out_size(h, k[0], s[0], d[0]), out_size(w, k[1], s[1], d[1])
            x_shape, w_shape, o_shape, ref = layout(n, h, w, c, k, f, oh, ow)
            count = k[0] * k[1] * (c if "depthwise" not in opname else 1)
            text, case = conv_case("%s_%d" % (name, index), opname, x_shape, w_shape, o_shape, s, d,
                                   ref, count, conv_label(xs, k, f, s, d))
            functions.append(text)
            cases.append(case)
        fams.append(family("linalg." + name, functions, cases))

    build("conv_2d_nhwc_hwcf", CONV_SHAPES, lambda n, h, w, c, k, f, oh, ow: (
        (n, h, w, c), (k[0], k[1], c, f), (n, oh, ow, f), conv_nhwc_hwcf))
    build("conv_2d_nhwc_fhwc", CONV_SHAPES[:3], lambda n, h, w, c, k, f, oh, ow: (
        (n, h, w, c), (f, k[0], k[1], c), (n, oh, ow, f),
        lambda x, wt, s, d: conv_nhwc_hwcf(x, wt.transpose(1, 2, 3, 0), s, d)))
    build("conv_2d_nchw_fchw", CONV_SHAPES[:3], lambda n, h, w, c, k, f, oh, ow: (
        (n, c, h, w), (f, c, k[0], k[1]), (n, f, oh, ow),
        lambda x, wt, s, d: conv_nhwc_hwcf(x.transpose(0, 2, 3, 1), wt.transpose(2, 3, 1, 0), s, d)
        .transpose(0, 3, 1, 2)))
    # On GPUs a convolution with enough output pixels and channels is a matmul in workgroup-memory
    # tiles (f32: from 128 tiles of 64x64; f16 on NVIDIA's tensor cores from any count), reading
    # its input in place: 2 x 64 x 64 pixels by 64 channels, 65 x 63 by 128 with strides and
    # dilations (the last tile of rows masked), and a ResNet's first layer (7 x 7 x 3 taps: K of
    # 147, its last step of 8 past K).
    build("conv_2d_nhwc_hwcf", [((2, 66, 66, 16), (3, 3), 64, (1, 1), (1, 1)),
                                ((1, 133, 129, 8), (3, 3), 128, (2, 2), (2, 2)),
                                ((2, 133, 133, 3), (7, 7), 64, (2, 2), (1, 1))],
          lambda n, h, w, c, k, f, oh, ow: ((n, h, w, c), (k[0], k[1], c, f), (n, oh, ow, f), conv_nhwc_hwcf),
          name="conv_2d_nhwc_hwcf_tiles")
    fams.append(conv_epilogue_family())
    dw_shapes = [((1, 7, 13, 5), (3, 3), 0, (1, 1), (1, 1)), ((2, 13, 7, 3), (3, 3), 0, (2, 2), (1, 1)),
                 ((1, 13, 13, 7), (3, 3), 0, (1, 1), (2, 2)), ((1, 1, 1000, 1), (1, 7), 0, (1, 1), (1, 1)),
                 ((1, 1, 1, 1), (1, 1), 0, (1, 1), (1, 1))]
    build("depthwise_conv_2d_nhwc_hwc", dw_shapes, lambda n, h, w, c, k, f, oh, ow: (
        (n, h, w, c), (k[0], k[1], c), (n, oh, ow, c),
        lambda x, wt, s, d: depthwise_nhwc_hwcm(x, wt[..., None], s, d)[..., 0]))
    build("depthwise_conv_2d_nchw_chw", dw_shapes[:3], lambda n, h, w, c, k, f, oh, ow: (
        (n, c, h, w), (c, k[0], k[1]), (n, c, oh, ow),
        lambda x, wt, s, d: depthwise_nhwc_hwcm(x.transpose(0, 2, 3, 1), wt.transpose(1, 2, 0)[..., None],
                                                s, d)[..., 0].transpose(0, 3, 1, 2)))
    build("depthwise_conv_2d_nhwc_hwcm", [((1, 7, 13, 5), (3, 3), 3, (1, 1), (1, 1)),
                                          ((1, 13, 7, 3), (3, 3), 2, (2, 2), (1, 1))],
          lambda n, h, w, c, k, f, oh, ow: (
              (n, h, w, c), (k[0], k[1], c, f), (n, oh, ow, c, f), depthwise_nhwc_hwcm))

    # The 1-D form (the 2-D reference on a unit dimension), plain conv_2d and the 3-D form.
    functions, cases = [], []
    for index, (n, w, c, kw, f, s, d) in enumerate([(1, 13, 3, 3, 5, 1, 1), (2, 1000, 1, 7, 7, 2, 2),
                                                    (1, 1, 1, 1, 1, 1, 1)]):
        ow = out_size(w, kw, s, d)
        xt, wt, ot = (tensor_type(sh, "f32") for sh in ((n, w, c), (kw, c, f), (n, ow, f)))
        name = "conv_1d_nwc_wcf_%d" % index
        body = init("o", (n, ow, f), "0.0") + [
            "%%r = linalg.conv_1d_nwc_wcf {dilations = dense<%d> : tensor<1xi64>, strides = dense<%d> : "
            "tensor<1xi64>} ins(%%x, %%w : %s, %s) outs(%%o : %s) -> %s" % (d, s, xt, wt, ot, ot)]
        functions.append(function(name, [("x", xt), ("w", wt)], [("%r", ot)], body))

        def make(rng, n=n, w=w, c=c, kw=kw, f=f, s=s, d=d):
            x, wgt = rand((n, w, c), rng), rand((kw, c, f), rng)
            a, b = f64(x[:, None], wgt[None])
            values = conv_nhwc_hwcf(a, b, (1, s), (1, d))[:, 0]
            bound = conv_nhwc_hwcf(np.abs(a), np.abs(b), (1, s), (1, d))[:, 0]
            return [x, wgt], [summed(values, bound, kw * c)]
        cases.append(Case(name, "%dx%dx%d*%dx%d s%d d%d" % (n, w, c, kw, f, s, d), make))
    fams.append(family("linalg.conv_1d_nwc_wcf", functions, cases))

    functions, cases = [], []
    for index, (h, w, kh, kw) in enumerate([(7, 13, 3, 3), (1, 1000, 1, 7), (1, 1, 1, 1)]):
        xt, wt, ot = (tensor_type(sh, "f32") for sh in ((h, w), (kh, kw), (h - kh + 1, w - kw + 1)))
        name = "conv_2d_%d" % index
        body = init("o", (h - kh + 1, w - kw + 1), "0.0") + [
            "%%r = linalg.conv_2d ins(%%x, %%w : %s, %s) outs(%%o : %s) -> %s" % (xt, wt, ot, ot)]
        functions.append(function(name, [("x", xt), ("w", wt)], [("%r", ot)], body))

        def make(rng, h=h, w=w, kh=kh, kw=kw):
            x, wgt = rand((h, w), rng), rand((kh, kw), rng)
            a, b = f64(x[None, :, :, None], wgt[:, :, None, None])
            values = conv_nhwc_hwcf(a, b, (1, 1), (1, 1))[0, :, :, 0]
            bound = conv_nhwc_hwcf(np.abs(a), np.abs(b), (1, 1), (1, 1))[0, :, :, 0]
            return [x, wgt], [summed(values, bound, kh * kw)]
        cases.append(Case(name, "%dx%d*%dx%d" % (h, w, kh, kw), make))
    fams.append(family("linalg.conv_2d", functions, cases))

    xs, ws = (1, 5, 7, 13, 3), (3, 3, 3, 3, 4)
    os_ = (1, 3, 5, 11, 4)
    xt, wt, ot = (tensor_type(sh, "f32") for sh in (xs, ws, os_))
    body = init("o", os_, "0.0") + [
        "%%r = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : "
        "tensor<3xi64>} ins(%%x, %%w : %s, %s) outs(%%o : %s) -> %s" % (xt, wt, ot, ot)]

    fams.append(family("linalg.conv_3d_ndhwc_dhwcf",
                       [function("conv_3d_ndhwc_dhwcf", [("x", xt), ("w", wt)], [("%r", ot)], body)],
                       [Case("conv_3d_ndhwc_dhwcf", "1x5x7x13x3*3x3x3x3x4", conv3d_make(xs, ws, os_))]))

    # Pooling: window shape only; max starts from -inf, min from +inf, sum from 0.
    pool_shapes = [((1, 7, 13, 3), (3, 3), (1, 1), (1, 1)), ((2, 13, 7, 5), (2, 2), (2, 2), (1, 1)),
                   ((1, 13, 13, 1), (3, 3), (2, 2), (2, 2)), ((1, 1, 1000, 1), (1, 7), (1, 3), (1, 1)),
                   ((1, 1, 1, 1), (1, 1), (1, 1), (1, 1))]
    kinds = [("max", NEG_INF, np.max), ("min", POS_INF, np.min), ("sum", "0.0", np.sum)]
    for layout in ("nhwc", "nchw"):
        for kind, start, reduce in kinds:
            opname = "pooling_%s_%s" % (layout, kind)
            if layout == "nchw" and kind == "min":
                continue  # no such op
            functions, cases = [], []
            for index, (xs, k, s, d) in enumerate(pool_shapes):
                n, h, w, c = xs
                oh, ow = out_size(h, k[0], s[0], d[0]), out_size(w, k[1], s[1], d[1])
                x_shape = xs if layout == "nhwc" else (n, c, h, w)
                o_shape = (n, oh, ow, c) if layout == "nhwc" else (n, c, oh, ow)
                xt, kt, ot = tensor_type(x_shape, "f32"), tensor_type(k, "f32"), tensor_type(o_shape, "f32")
                name = "%s_%d" % (opname, index)
                body = init("o", o_shape, start) + init("k", k) + [
                    "%%r = linalg.%s %s ins(%%x, %%k : %s, %s) outs(%%o : %s) -> %s" % (
                        opname, conv_attrs(s, d), xt, kt, ot, ot)]
                functions.append(function(name, [("x", xt)], [("%r", ot)], body))

                def make(rng, x_shape=x_shape, k=k, s=s, d=d, layout=layout, reduce=reduce, kind=kind):
                    x = rand(x_shape, rng)
                    a = x.astype(np.float64)
                    if layout == "nchw":
                        a = a.transpose(0, 2, 3, 1)
                    values = pool_nhwc(a, k[0], k[1], s, d, reduce)
                    bound = pool_nhwc(np.abs(a), k[0], k[1], s, d, np.sum)
                    if layout == "nchw":
                        values, bound = values.transpose(0, 3, 1, 2), bound.transpose(0, 3, 1, 2)
                    if kind == "sum":
                        return [x], [summed(values, bound, k[0] * k[1])]
                    return [x], [Expected(values, np.float32)]
                cases.append(Case(name, "%s*%dx%d s%d%d d%d%d" % (shape_name(x_shape), k[0], k[1], s[0], s[1],
                                                                   d[0], d[1]), make))
            fams.append(family("linalg." + opname, functions, cases))

    # A pad read only by a convolution or pooling, which the CPU code generator
    # reads through a window per workgroup (depthwise convolutions: in place,
    # each vector read guarded): images of several workgroups and of one,
    # strides 1 and 2, asymmetric padding, a batch of 2, channels that are not
    # whole vector registers, 5 x 5 filters, and poolings (max padded with
    # -inf, min with +inf, sum with 0; also read in place).
    # (kind, (N, H, W, C), (KH, KW), F, stride, low (H, W), high (H, W))
    padded = [("depthwise_conv_2d_nhwc_hwc", (1, 40, 23, 32), (3, 3), 0, (1, 1), (1, 1), (1, 1)),
              ("depthwise_conv_2d_nhwc_hwc", (1, 33, 32, 48), (3, 3), 0, (2, 2), (1, 1), (1, 1)),
              ("depthwise_conv_2d_nhwc_hwc", (2, 6, 5, 3), (3, 3), 0, (1, 1), (1, 1), (1, 1)),
              ("depthwise_conv_2d_nhwc_hwc", (1, 9, 20, 20), (3, 3), 0, (1, 1), (2, 0), (0, 2)),
              ("depthwise_conv_2d_nhwc_hwc", (1, 16, 16, 24), (3, 3), 0, (2, 2), (0, 0), (1, 1)),
              ("depthwise_conv_2d_nhwc_hwc", (1, 14, 14, 32), (5, 5), 0, (1, 1), (2, 2), (2, 2)),
              ("conv_2d_nhwc_hwcf", (1, 19, 11, 5), (3, 3), 7, (1, 1), (2, 1), (0, 2)),
              ("conv_2d_nhwc_hwcf", (1, 30, 30, 16), (3, 3), 32, (2, 2), (1, 1), (1, 1)),
              ("pooling_nhwc_max", (1, 31, 31, 20), (3, 3), 0, (2, 2), (1, 1), (1, 1)),
              ("pooling_nhwc_max", (1, 12, 20, 16), (3, 3), 0, (1, 1), (2, 0), (0, 2)),
              ("pooling_nhwc_min", (1, 17, 15, 24), (3, 3), 0, (2, 2), (1, 1), (1, 1)),
              ("pooling_nhwc_sum", (1, 9, 21, 32), (3, 3), 0, (1, 1), (1, 1), (1, 1))]
    functions, cases = [], []
    for index, (opname, xs, k, f, s, low, high) in enumerate(padded):
        n, h, w, c = xs
        ps = (n, h + low[0] + high[0], w + low[1] + high[1], c)
        oh, ow = out_size(ps[1], k[0], s[0], 1), out_size(ps[2], k[1], s[1], 1)
        pool = opname.startswith("pooling")
        if opname == "conv_2d_nhwc_hwcf":
            w_shape, o_shape = (k[0], k[1], c, f), (n, oh, ow, f)
        else:
            w_shape, o_shape = k if pool else (k[0], k[1], c), (n, oh, ow, c)
        xt, pt, wt, ot = (tensor_type(sh, "f32") for sh in (xs, ps, w_shape, o_shape))
        identity = {"pooling_nhwc_max": NEG_INF, "pooling_nhwc_min": POS_INF}.get(opname, "0.0")
        padding = identity
        name = "padded_%s_%d" % (opname, index)
        body = ["%%p = arith.constant %s : f32" % padding,
                "%%padded = tensor.pad %%x low[0, %d, %d, 0] high[0, %d, %d, 0] {" % (low + high),
                "^bb0(%i: index, %j: index, %k: index, %l: index):",
                "  tensor.yield %p : f32",
                "} : %s to %s" % (xt, pt)]
        body += init("o", o_shape, identity)
        if pool:
            body += init("w", k)
        body.append("%%r = linalg.%s %s ins(%%padded, %%w : %s, %s) outs(%%o : %s) -> %s" % (
            opname, conv_attrs(s, (1, 1)), pt, wt, ot, ot))
        args = [("x", xt)] + ([] if pool else [("w", wt)])
        functions.append(function(name, args, [("%r", ot)], body))

        def make(rng, opname=opname, xs=xs, w_shape=w_shape, s=s, low=low, high=high, pool=pool, k=k):
            x = rand(xs, rng)
            widths = [(0, 0), (low[0], high[0]), (low[1], high[1]), (0, 0)]
            if opname == "pooling_nhwc_sum":
                a = np.pad(x.astype(np.float64), widths)
                values = pool_nhwc(a, k[0], k[1], s, (1, 1), np.sum)
                return [x], [summed(values, pool_nhwc(np.abs(a), k[0], k[1], s, (1, 1), np.sum), k[0] * k[1])]
            if pool:
                fill, reduce = (-np.inf, np.max) if opname == "pooling_nhwc_max" else (np.inf, np.min)
                a = np.pad(x.astype(np.float64), widths, constant_values=fill)
                return [x], [Expected(pool_nhwc(a, k[0], k[1], s, (1, 1), reduce), np.float32)]
            wgt = rand(w_shape, rng)
            a, b = f64(np.pad(x, widths), wgt)
            if opname == "conv_2d_nhwc_hwcf":
                ref = lambda u, v: conv_nhwc_hwcf(u, v, s, (1, 1))
                count = k[0] * k[1] * xs[3]
            else:
                ref = lambda u, v: depthwise_nhwc_hwcm(u, v[..., None], s, (1, 1))[..., 0]
                count = k[0] * k[1]
            return [x, wgt], [summed(ref(a, b), ref(np.abs(a), np.abs(b)), count)]
        cases.append(Case(name, "%s pad %s %s *%dx%d s%d%d" % (shape_name(xs), list(low), list(high), k[0],
                                                              k[1], s[0], s[1]), make))
    fams.append(family("padded convolutions and poolings", functions, cases))
    return fams


# Data movement, reductions, fill and softmax ---------------------------------


def unary_case(name, label, in_shape, out_shape, body, make_ref, in_t="f32", out_t="f32", maker=None):
    """A function of one tensor %x whose body ends in %r; make_ref(x) -> Expected."""
    xt, ot = tensor_type(in_shape, in_t), tensor_type(out_shape, out_t)
    text = function(name, [("x", xt)], [("%r", ot)],
                    [line.replace("{xt}", xt).replace("{ot}", ot) for line in body])

    def make(rng):
        x = (maker or rand)(in_shape, rng)
        return [x], [make_ref(x)]
    return text, Case(name, label, make)


def build_family(fname, items):
    return family(fname, [t for t, _ in items], [c for _, c in items])


def movement_families():
    fams = []
    items = []
    for index, (shape, perm) in enumerate([((7, 13), (1, 0)), ((1000, 13), (1, 0)), ((1, 1), (1, 0)),
                                           ((7, 1, 13), (2, 0, 1)), ((13, 7, 1000), (1, 2, 0)),
                                           ((7, 13, 5), (0, 2, 1)),
                                           # Short innermost outputs: NCHW to NHWC images
                                           # (3 channels, 45 columns: a partial tile), and 2.
                                           ((1, 3, 37, 45), (0, 2, 3, 1)), ((2, 4, 8, 16), (0, 2, 3, 1)),
                                           ((2, 7, 33), (1, 2, 0))]):
        out = tuple(shape[p] for p in perm)
        items.append(unary_case(
            "transpose_%d" % index, "%s perm %s" % (shape_name(shape), list(perm)), shape, out,
            init("e", out) + ["%%r = linalg.transpose ins(%%x : {xt}) outs(%%e : {ot}) permutation = %s"
                              % list(perm)],
            lambda x, perm=perm: Expected(x.transpose(perm), np.float32)))
    fams.append(build_family("linalg.transpose", items))

    items = []
    for index, (shape, out, dims) in enumerate([((13,), (7, 13), [0]), ((7,), (7, 13), [1]),
                                                ((1000,), (13, 1000), [0]), ((1,), (7, 1), [0]),
                                                ((7, 13), (7, 5, 13), [1]), ((13,), (1, 13, 7), [0, 2])]):
        def ref(x, out=out, dims=dims):
            return Expected(np.broadcast_to(np.expand_dims(x, dims), out), np.float32)
        items.append(unary_case(
            "broadcast_%d" % index, "%s to %s dims %s" % (shape_name(shape), shape_name(out), dims), shape, out,
            init("e", out) + ["%%r = linalg.broadcast ins(%%x : {xt}) outs(%%e : {ot}) dimensions = %s" % dims],
            ref))
    fams.append(build_family("linalg.broadcast", items))

    items = []
    for index, shape in enumerate([(1,), (7,), (13,), (1000,), (7, 13)]):
        items.append(unary_case(
            "copy_%d" % index, shape_name(shape), shape, shape,
            init("e", shape) + ["%r = linalg.copy ins(%x : {xt}) outs(%e : {ot}) -> {ot}"],
            lambda x: Expected(x, np.float32), maker=ANY_F32))
    fams.append(build_family("linalg.copy", items))

    # fill: from a scalar argument (a push constant) and from a constant.
    functions, cases = [], []
    for index, (shape, t) in enumerate([((1,), "f32"), ((7,), "f32"), ((13,), "i32"), ((1000,), "f32"),
                                        ((7, 13), "f32"), ((7, 13), "i32")]):
        ty = tensor_type(shape, t)
        name = "fill_%d" % index
        functions.append(function(name, [("v", t)], [("%r", ty)], [
            "%%e = tensor.empty() : %s" % ty,
            "%%r = linalg.fill ins(%%v : %s) outs(%%e : %s) -> %s" % (t, ty, ty)]))

        def make(rng, shape=shape, t=t):
            v = np.float32(rng.uniform(-100, 100)) if t == "f32" else np.int32(rng.integers(I32_MIN, I32_MAX))
            return [v], [Expected(np.full(shape, v), np_type(t))]
        cases.append(Case(name, "%s from an %s argument" % (shape_name(shape), t), make))
    ty = tensor_type((13, 7), "f32")
    functions.append(function("fill_const", [], [("%r", ty)], init("r", (13, 7), "-2.5")))
    cases.append(Case("fill_const", "13x7 from a constant",
                      lambda rng: ([], [Expected(np.full((13, 7), -2.5), np.float32)])))
    fams.append(family("linalg.fill", functions, cases))
    return fams


REDUCE_SHAPES = [((7, 13), [0]), ((7, 13), [1]), ((1000, 13), [0]), ((1000, 13), [1]), ((13, 1000), [1]),
                 ((7, 1, 13), [0, 2]), ((1000,), [0]), ((1,), [0]), ((7, 13), [0, 1]), ((13, 7, 1000), [2])]


def reduce_families():
    fams = []
    kinds = [("addf", "0.0", np.sum, "arith.addf"), ("maximumf", NEG_INF, np.max, "arith.maximumf"),
             ("minimumf", POS_INF, np.min, "arith.minimumf"), ("mulf", "1.0", np.prod, "arith.mulf")]
    for kind, start, reduce, body_op in kinds:
        items = []
        for index, (shape, dims) in enumerate(REDUCE_SHAPES):
            out = tuple(d for i, d in enumerate(shape) if i not in dims)
            count = int(np.prod([shape[d] for d in dims]))

            def ref(x, dims=tuple(dims), reduce=reduce, kind=kind, count=count):
                a = x.astype(np.float64)
                values = reduce(a, axis=dims)
                if kind == "addf":
                    return summed(values, np.sum(np.abs(a), axis=dims), count)
                if kind == "mulf":
                    return Expected(values, np.float32, "sum", slack=np.abs(values) * (count + 2) * U32)
                return Expected(values, np.float32)
            # Products of many terms in [-1, 1] underflow: keep them near 1.
            maker = (lambda s, r: r.uniform(0.9, 1.1, size=s).astype(np.float32)
                     * r.choice([-1, 1], size=s).astype(np.float32)) if kind == "mulf" else None
            items.append(unary_case(
                "reduce_%s_%d" % (kind, index), "%s dims %s" % (shape_name(shape), dims), shape, out,
                init("o", out, start) + [
                    "%%r = linalg.reduce { %s } ins(%%x : {xt}) outs(%%o : {ot}) dimensions = %s" % (body_op, dims)],
                ref, maker=maker))
        # NaN propagates through maximumf/minimumf reductions.
        if kind in ("maximumf", "minimumf"):
            def nan_rows(shape, rng, kind=kind):
                x = rand(shape, rng)
                x[2, 5] = x[5, 12] = np.nan
                x[3, :] = -np.inf if kind == "maximumf" else np.inf
                return x
            items.append(unary_case(
                "reduce_%s_nan" % kind, "7x13 dims [1] with NaN and infinities", (7, 13), (7,),
                init("o", (7,), start) + [
                    "%%r = linalg.reduce { %s } ins(%%x : {xt}) outs(%%o : {ot}) dimensions = [1]" % body_op],
                lambda x, reduce=reduce: Expected(reduce(x.astype(np.float64), axis=1), np.float32),
                maker=nan_rows))
        fams.append(build_family("linalg.reduce_" + kind, items))

    # Integer sum and a generic reduction with two inputs (a dot product per row).
    items = []
    for index, (shape, dims) in enumerate(REDUCE_SHAPES[:6]):
        out = tuple(d for i, d in enumerate(shape) if i not in dims)
        items.append(unary_case(
            "reduce_addi_%d" % index, "%s dims %s" % (shape_name(shape), dims), shape, out,
            init("o", out, "0", "i32") + [
                "%%r = linalg.reduce { arith.addi } ins(%%x : {xt}) outs(%%o : {ot}) dimensions = %s" % dims],
            lambda x, dims=tuple(dims): Expected(wrap_int(x.astype(np.int64).sum(axis=dims), "i32"), np.int32),
            in_t="i32", out_t="i32", maker=ANY_I32))
    fams.append(build_family("linalg.reduce_addi", items))
    return fams


def softmax_families():
    items = []
    for index, (shape, dim) in enumerate([((7, 13), 1), ((7, 13), 0), ((1, 1000), 1), ((13, 1), 1),
                                          ((1000, 7), 1), ((7, 1, 13), 2), ((1,), 0)]):
        def maker(shape, rng):
            x = mixed(uniform(-10, 10), uniform(-1000, 1000))(shape, rng)
            flat = x.reshape(-1)
            flat[::11] = -np.inf  # masked entries
            flat[3::17] = 80.0
            return x

        def ref(x, dim=dim):
            a = x.astype(np.float64)
            m = a.max(axis=dim, keepdims=True)
            with np.errstate(invalid="ignore"):  # a row of -inf only: NaN
                e = np.exp(a - m)
                values = e / e.sum(axis=dim, keepdims=True)
            n = a.shape[dim]
            # exp of a rounded difference, a sum of n terms and a division.
            with np.errstate(invalid="ignore"):
                shifted = np.where(np.isfinite(a), np.abs(a - m), 0.0)
            rel = (n + 8) * U32 + shifted * U32  # exp within 2 ulp here
            return Expected(values, np.float32, "sum", slack=rel * values, atol=1e-30)
        items.append(unary_case(
            "softmax_%d" % index, "%s dim %d" % (shape_name(shape), dim), shape, shape,
            init("e", shape) + ["%%r = linalg.softmax dimension(%d) ins(%%x : {xt}) outs(%%e : {ot}) -> {ot}" % dim],
            ref, maker=maker))
    return [build_family("linalg.softmax", items)]


# Linalg elementwise named ops, linalg.elementwise and linalg.map --------------

NAMED_SHAPES = [(1,), (7,), (13,), (1000,), (7, 13)]


def named_elementwise_family(fname, op_text, types, result, ref, makers, specials=(), ulp=None, arrow=True):
    functions, cases = [], []
    mode = "ulp" if ulp is not None else "exact"
    makers = makers if isinstance(makers, list) else [makers] * len(types)
    for index, shape in enumerate(NAMED_SHAPES):
        name = "%s_%s" % (fname.replace(".", "_"), shape_name(shape))
        tys = [tensor_type(shape, t) for t in types]
        ot = tensor_type(shape, result)
        ins = ", ".join("%%x%d" % i for i in range(len(types)))
        body = init("e", shape, t=result) + ["%%r = %s ins(%s : %s) outs(%%e : %s)%s" % (
            op_text, ins, ", ".join(tys), ot, " -> " + ot if arrow else "")]
        functions.append(function(name, [("x%d" % i, t) for i, t in enumerate(tys)], [("%r", ot)], body))

        def make(rng, shape=shape, index=index):
            inputs = [m(shape, rng) for m in makers]
            place_specials(inputs, specials, index)
            with np.errstate(all="ignore"):
                values = ref(*[x.astype(np.float64) if x.dtype != np.bool_ else x for x in inputs])
            atol = float(np.finfo(np.float32).tiny) if ulp is not None else 0.0
            limit = 0.0 if ulp is None else ulp_limit(ulp, inputs[0].astype(np.float64))
            return inputs, [Expected(values, np_type(result), mode, ulp=limit, atol=atol)]
        cases.append(Case(name, shape_name(shape), make))
    return family(fname, functions, cases, "ulp" if ulp is not None else None)


def named_elementwise_families():
    fams = []
    exp_in = mixed(uniform(-104, 89), magnitudes(-30, 1.9))
    exp_sp = [0.0, -0.0, INF, -INF, NAN, 88.73, -104.0]
    unary = [
        ("exp", np.exp, exp_in, exp_sp, ULP_TOLERANCE["exp"]),
        ("log", np.log, NORMAL_POSITIVE, [0.0, 1.0, -1.0, INF, NAN, F32_TINY], ULP_TOLERANCE["log"]),
        ("abs", np.abs, ANY_F32, [-0.0, -INF, NAN], None),
        ("ceil", np.ceil, ANY_F32, [-0.5, 0.5, -0.0, 1e30], None),
        ("floor", np.floor, ANY_F32, [-0.5, 0.5, -0.0, 1e30], None),
        ("negf", np.negative, ANY_F32, [0.0, INF, NAN], None),
        ("reciprocal", lambda x: 1.0 / x, ANY_F32, [0.0, -0.0, INF, 3.0, F32_MAX], None),
        ("round", round_half_away, ANY_F32, [0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997], None),
        ("sqrt", np.sqrt, POSITIVE, [0.0, -0.0, -1.0, INF, 2.0], None),
        ("rsqrt", lambda x: 1.0 / np.sqrt(x), POSITIVE, [0.0, -1.0, INF, 4.0], ULP_TOLERANCE["rsqrt"]),
        ("square", np.square, ANY_F32, [1e20, -1e-30, NAN], None),
        ("tanh", np.tanh, mixed(uniform(-20, 20), magnitudes(-30, 2)), [0.0, 1e-10, INF, -INF, NAN, 9.0],
         ULP_TOLERANCE["tanh"]),
        ("erf", erf64, mixed(uniform(-6, 6), magnitudes(-30, 2)), [0.0, 1e-10, INF, -INF, NAN, 3.9],
         ULP_TOLERANCE["erf"]),
    ]
    for name, ref, maker, specials, ulp in unary:
        fams.append(named_elementwise_family("linalg." + name, "linalg." + name, ["f32"], "f32", ref, maker,
                                             specials, ulp))
    binary = [
        ("add", lambda a, b: a + b, None), ("sub", lambda a, b: a - b, None), ("mul", lambda a, b: a * b, None),
        ("div", lambda a, b: a / b, None), ("max", ieee_max, None), ("min", ieee_min, None),
    ]
    for name, ref, ulp in binary:
        fams.append(named_elementwise_family("linalg." + name, "linalg." + name, ["f32", "f32"], "f32", ref,
                                             ANY_F32, BINARY_SPECIALS, ulp))
    fams.append(named_elementwise_family(
        "linalg.powf", "linalg.powf", ["f32", "f32"], "f32", np.power,
        [mixed(magnitudes(-4, 4, signed=False), uniform(0.5, 2.0)), uniform(-12, 12)],
        [(0.0, 2.0), (-2.0, 3.0), (-2.0, 0.5), (2.0, 128.0)], ULP_TOLERANCE["powf"]))
    bools = lambda s, r: r.integers(0, 2, size=s).astype(bool)
    fams.append(named_elementwise_family("linalg.select", "linalg.select", ["i1", "f32", "f32"], "f32",
                                         lambda c, a, b: np.where(c, a, b), [bools, ANY_F32, ANY_F32]))
    for kind, types, ref, maker, ulp in [
            ("exp", ["f32"], np.exp, exp_in, ULP_TOLERANCE["exp"]),
            ("erf", ["f32"], erf64, mixed(uniform(-6, 6), magnitudes(-30, 2)), ULP_TOLERANCE["erf"]),
            ("add", ["f32", "f32"], lambda a, b: a + b, ANY_F32, None),
            ("max_signed", ["f32", "f32"], ieee_max, ANY_F32, None),
            ("square", ["f32"], np.square, ANY_F32, None)]:
        fams.append(named_elementwise_family(
            "linalg.elementwise_" + kind, "linalg.elementwise kind=#linalg.elementwise_kind<%s>" % kind,
            types, "f32", ref, maker, BINARY_SPECIALS if len(types) == 2 else [0.0, INF, NAN], ulp))
    fams.append(named_elementwise_family("linalg.map_addf", "linalg.map { arith.addf }", ["f32", "f32"], "f32",
                                         lambda a, b: a + b, ANY_F32, BINARY_SPECIALS, arrow=False))
    fams.append(named_elementwise_family("linalg.map_exp", "linalg.map { math.exp }", ["f32"], "f32", np.exp,
                                         exp_in, exp_sp, ULP_TOLERANCE["exp"], arrow=False))
    return fams


# TOSA -------------------------------------------------------------------------

ZP = '%zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>'


def tosa_case(name, label, in_shapes, out_shape, op_line, ref, makers=None):
    """A function of tensors %x0, %x1, ... whose body is ZP and op_line ({xt0}, {ot}, ... filled in)."""
    tys = [tensor_type(s, "f32") for s in in_shapes]
    ot = tensor_type(out_shape, "f32")
    for i, t in enumerate(tys):
        op_line = op_line.replace("{xt%d}" % i, t)
    text = function(name, [("x%d" % i, t) for i, t in enumerate(tys)], [("%r", ot)],
                    [ZP, op_line.replace("{ot}", ot)])

    def make(rng):
        inputs = [(makers[i] if makers else rand)(s, rng) for i, s in enumerate(in_shapes)]
        return inputs, [ref(*inputs)]
    return text, Case(name, label, make)


def tosa_families():
    fams = []
    items = []
    for index, (a, b, out) in enumerate([((7, 13), (1, 13), (7, 13)), ((7, 13), (7, 1), (7, 13)),
                                         ((1000,), (1,), (1000,)), ((1, 1), (1, 1), (1, 1)),
                                         ((2, 7, 13), (1, 1, 13), (2, 7, 13)), ((1, 13), (7, 1), (7, 13))]):
        items.append(tosa_case(
            "add_%d" % index, "%s + %s" % (shape_name(a), shape_name(b)), [a, b], out,
            "%r = tosa.add %x0, %x1 : ({xt0}, {xt1}) -> {ot}",
            lambda x, y: Expected(x.astype(np.float64) + y, np.float32), [ANY_F32, ANY_F32]))
    fams.append(build_family("tosa.add", items))

    items = []
    for index, (n, h, c, w) in enumerate([(1, 1, 1, 1), (1, 7, 13, 5), (2, 13, 1000, 7), (1, 1000, 7, 13),
                                          (3, 1, 7, 1000)]):
        def ref(a, b):
            a, b = f64(a, b)
            return summed(a @ b, np.abs(a) @ np.abs(b), a.shape[2])
        items.append(tosa_case(
            "matmul_%d" % index, "%dx%dx%d @ %dx%dx%d" % (n, h, c, n, c, w), [(n, h, c), (n, c, w)], (n, h, w),
            "%r = tosa.matmul %x0, %x1, %zp, %zp : ({xt0}, {xt1}, tensor<1xf32>, tensor<1xf32>) -> {ot}", ref))
    fams.append(build_family("tosa.matmul", items))

    for op, reduce in [("reduce_sum", np.sum), ("reduce_max", np.max)]:
        items = []
        for index, (shape, axis) in enumerate([((7, 13), 0), ((7, 13), 1), ((1000, 13), 0), ((13, 7, 1000), 2),
                                               ((1,), 0)]):
            out = tuple(1 if i == axis else d for i, d in enumerate(shape))

            def ref(x, axis=axis, reduce=reduce):
                a = x.astype(np.float64)
                values = reduce(a, axis=axis, keepdims=True)
                if reduce is np.sum:
                    return summed(values, np.sum(np.abs(a), axis=axis, keepdims=True), a.shape[axis])
                return Expected(values, np.float32)
            items.append(tosa_case(
                "%s_%d" % (op, index), "%s axis %d" % (shape_name(shape), axis), [shape], out,
                "%%r = tosa.%s %%x0 {axis = %d : i32} : ({xt0}) -> {ot}" % (op, axis), ref))
        fams.append(build_family("tosa." + op, items))

    items = []
    for index, ((n, h, w, c), (kh, kw), f, pad, stride, dil) in enumerate([
            ((1, 7, 13, 3), (3, 3), 5, (1, 1, 1, 1), (1, 1), (1, 1)),
            ((2, 13, 7, 1), (3, 3), 7, (0, 0, 1, 1), (2, 2), (1, 1)),
            ((1, 13, 13, 3), (3, 3), 4, (2, 2, 2, 2), (1, 1), (2, 2)),
            ((1, 7, 13, 13), (1, 1), 7, (0, 0, 0, 0), (1, 1), (1, 1)),
            ((1, 1, 1, 1), (1, 1), 1, (0, 0, 0, 0), (1, 1), (1, 1))]):
        oh = out_size(h + pad[0] + pad[1], kh, stride[0], dil[0])
        ow = out_size(w + pad[2] + pad[3], kw, stride[1], dil[1])

        def ref(x, wt, b, pad=pad, stride=stride, dil=dil):
            x, wt, b = f64(x, wt, b)
            x = np.pad(x, ((0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (0, 0)))
            hwcf = wt.transpose(1, 2, 3, 0)
            values = conv_nhwc_hwcf(x, hwcf, stride, dil) + b
            bound = conv_nhwc_hwcf(np.abs(x), np.abs(hwcf), stride, dil) + np.abs(b)
            return summed(values, bound, kh * kw * c + 1)
        items.append(tosa_case(
            "conv2d_%d" % index, "%s*%dx%dx%d pad %s s%d%d d%d%d" % (
                shape_name((n, h, w, c)), f, kh, kw, list(pad), stride[0], stride[1], dil[0], dil[1]),
            [(n, h, w, c), (f, kh, kw, c), (f,)], (n, oh, ow, f),
            "%%r = tosa.conv2d %%x0, %%x1, %%x2, %%zp, %%zp {acc_type = f32, dilation = array<i64: %d, %d>, "
            "pad = array<i64: %d, %d, %d, %d>, stride = array<i64: %d, %d>} : ({xt0}, {xt1}, {xt2}, "
            "tensor<1xf32>, tensor<1xf32>) -> {ot}" % (dil + pad + stride), ref))
    fams.append(build_family("tosa.conv2d", items))

    items = []
    for index, (shape, perm) in enumerate([((7, 13), (1, 0)), ((7, 1, 13), (2, 0, 1)), ((1000, 13), (1, 0)),
                                           ((13, 7, 1000), (2, 1, 0))]):
        items.append(tosa_case(
            "transpose_%d" % index, "%s perm %s" % (shape_name(shape), list(perm)), [shape],
            tuple(shape[p] for p in perm),
            "%%r = tosa.transpose %%x0 {perms = array<i32: %s>} : ({xt0}) -> {ot}" % ", ".join(map(str, perm)),
            lambda x, perm=perm: Expected(x.transpose(perm), np.float32)))
    fams.append(build_family("tosa.transpose", items))

    for op, ref, maker, ulp in [
            ("sigmoid", lambda x: 1.0 / (1.0 + np.exp(-x)), mixed(uniform(-100, 100), magnitudes(-30, 1.5)), 5),
            ("tanh", np.tanh, mixed(uniform(-20, 20), magnitudes(-30, 2)), ULP_TOLERANCE["tanh"]),
            ("exp", np.exp, mixed(uniform(-104, 89), magnitudes(-30, 1.9)), ULP_TOLERANCE["exp"])]:
        items = []
        for index, shape in enumerate([(1,), (7,), (1000,), (7, 13)]):
            items.append(tosa_case(
                "%s_%d" % (op, index), shape_name(shape), [shape], shape,
                "%%r = tosa.%s %%x0 : ({xt0}) -> {ot}" % op,
                lambda x, ref=ref, ulp=ulp: Expected(ref(x.astype(np.float64)), np.float32, "ulp",
                                                     ulp=ulp_limit(ulp, x.astype(np.float64)),
                                                     atol=F32_TINY), [maker]))
        fam = build_family("tosa." + op, items)
        fam.stat = "ulp"
        fams.append(fam)

    items = []
    for index, shape in enumerate([(1,), (13,), (1000,), (7, 13)]):
        items.append(tosa_case(
            "clamp_%d" % index, shape_name(shape), [shape], shape,
            "%r = tosa.clamp %x0 {min_val = -0.5 : f32, max_val = 0.25 : f32} : ({xt0}) -> {ot}",
            lambda x: Expected(np.clip(x.astype(np.float64), -0.5, 0.25), np.float32)))
    fams.append(build_family("tosa.clamp", items))

    items = []
    for index, (shape, k, s, pad) in enumerate([((1, 7, 13, 3), (3, 3), (1, 1), (1, 1, 1, 1)),
                                                ((2, 13, 7, 5), (2, 2), (2, 2), (0, 1, 0, 1)),
                                                ((1, 7, 13, 1), (3, 3), (2, 2), (1, 1, 1, 1))]):
        n, h, w, c = shape
        oh = out_size(h + pad[0] + pad[1], k[0], s[0], 1)
        ow = out_size(w + pad[2] + pad[3], k[1], s[1], 1)
        attrs = "kernel = array<i64: %d, %d>, pad = array<i64: %d, %d, %d, %d>, stride = array<i64: %d, %d>" % (
            k + pad + s)

        def padded(x, pad, value):
            return np.pad(x.astype(np.float64), ((0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (0, 0)),
                          constant_values=value)

        def max_ref(x, k=k, s=s, pad=pad):
            return Expected(pool_nhwc(padded(x, pad, -np.inf), k[0], k[1], s, (1, 1), np.max), np.float32)

        def avg_ref(x, k=k, s=s, pad=pad):
            # TOSA divides by the number of elements inside the input, not the padding.
            total = pool_nhwc(padded(x, pad, 0.0), k[0], k[1], s, (1, 1), np.sum)
            count = pool_nhwc(padded(np.ones_like(x), pad, 0.0), k[0], k[1], s, (1, 1), np.sum)
            bound = pool_nhwc(padded(np.abs(x), pad, 0.0), k[0], k[1], s, (1, 1), np.sum)
            return summed(total / count, bound / count, k[0] * k[1] + 2)
        label = "%s k%dx%d s%d%d pad %s" % (shape_name(shape), k[0], k[1], s[0], s[1], list(pad))
        items.append(tosa_case("max_pool2d_%d" % index, label, [shape], (n, oh, ow, c),
                               "%%r = tosa.max_pool2d %%x0 {%s} : ({xt0}) -> {ot}" % attrs, max_ref))
        items.append(tosa_case(
            "avg_pool2d_%d" % index, label, [shape], (n, oh, ow, c),
            "%%r = tosa.avg_pool2d %%x0, %%zp, %%zp {acc_type = f32, %s} : ({xt0}, tensor<1xf32>, "
            "tensor<1xf32>) -> {ot}" % attrs, avg_ref))
    fams.append(build_family("tosa.pool2d", items))
    return fams


# Dynamic shapes ----------------------------------------------------------------

DYNAMIC_SIZES = [1, 7, 13, 1000]

DYNAMIC_SOURCE = """
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @dyn_exp(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @dyn_add(%x: tensor<?xf32>, %z: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.add ins(%x, %z : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @dyn_add_row(%x: tensor<?x13xf32>, %b: tensor<13xf32>) -> tensor<?x13xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x13xf32>
  %e = tensor.empty(%n) : tensor<?x13xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<?x13xf32>, tensor<13xf32>) outs(%e : tensor<?x13xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %y = arith.addf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<?x13xf32>
  return %r : tensor<?x13xf32>
}

func.func @dyn_tanh_2d(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%n, %m) : tensor<?x?xf32>
  %r = linalg.tanh ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @dyn_matmul(%x: tensor<?x13xf32>, %w: tensor<13x7xf32>) -> tensor<?x7xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x13xf32>
  %e = tensor.empty(%n) : tensor<?x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x7xf32>) -> tensor<?x7xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x13xf32>, tensor<13x7xf32>) outs(%f : tensor<?x7xf32>) -> tensor<?x7xf32>
  return %r : tensor<?x7xf32>
}

func.func @dyn_matmul_k(%x: tensor<7x?xf32>, %w: tensor<?x13xf32>) -> tensor<7x13xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x13xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<7x13xf32>) -> tensor<7x13xf32>
  %r = linalg.matmul ins(%x, %w : tensor<7x?xf32>, tensor<?x13xf32>) outs(%f : tensor<7x13xf32>) -> tensor<7x13xf32>
  return %r : tensor<7x13xf32>
}

func.func @dyn_reduce_rows(%x: tensor<?x13xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x13xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.reduce { arith.addf } ins(%x : tensor<?x13xf32>) outs(%f : tensor<?xf32>) dimensions = [1]
  return %r : tensor<?xf32>
}

func.func @dyn_reduce_cols(%x: tensor<?x13xf32>) -> tensor<13xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<13xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<13xf32>) -> tensor<13xf32>
  %r = linalg.reduce { arith.maximumf } ins(%x : tensor<?x13xf32>) outs(%f : tensor<13xf32>) dimensions = [0]
  return %r : tensor<13xf32>
}

func.func @dyn_softmax(%x: tensor<?x13xf32>) -> tensor<?x13xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x13xf32>
  %e = tensor.empty(%n) : tensor<?x13xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<?x13xf32>) outs(%e : tensor<?x13xf32>) -> tensor<?x13xf32>
  return %r : tensor<?x13xf32>
}

func.func @dyn_transpose(%x: tensor<?x13xf32>) -> tensor<13x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x13xf32>
  %e = tensor.empty(%n) : tensor<13x?xf32>
  %r = linalg.transpose ins(%x : tensor<?x13xf32>) outs(%e : tensor<13x?xf32>) permutation = [1, 0]
  return %r : tensor<13x?xf32>
}
"""


def dynamic_families():
    def exp_ref(x):
        x = x.astype(np.float64)
        return Expected(np.exp(x), np.float32, "ulp", ulp=ulp_limit(ULP_TOLERANCE["exp"], x), atol=F32_TINY)

    def add_ref(x, z):
        return Expected(x.astype(np.float64) + z, np.float32)

    def tanh_ref(x):
        return Expected(np.tanh(x.astype(np.float64)), np.float32, "ulp", ulp=ULP_TOLERANCE["tanh"], atol=F32_TINY)

    def matmul_ref(x, w):
        a, b = f64(x, w)
        return summed(a @ b, np.abs(a) @ np.abs(b), a.shape[1])

    def rows_ref(x):
        a = x.astype(np.float64)
        return summed(a.sum(axis=1), np.abs(a).sum(axis=1), a.shape[1])

    def softmax_ref(x):
        a = x.astype(np.float64)
        e = np.exp(a - a.max(axis=1, keepdims=True))
        values = e / e.sum(axis=1, keepdims=True)
        return Expected(values, np.float32, "sum", slack=values * (40 + 20 * 2) * U32, atol=1e-30)

    specs = [  # function, input shapes for size n, reference, maker
        ("dyn_exp", lambda n: [(n,)], exp_ref, mixed(uniform(-104, 89), magnitudes(-30, 1.9))),
        ("dyn_add", lambda n: [(n,), (n,)], add_ref, ANY_F32),
        ("dyn_add_row", lambda n: [(n, 13), (13,)], add_ref, ANY_F32),
        ("dyn_tanh_2d", lambda n: [(n, 7 if n != 7 else 13)], tanh_ref, mixed(uniform(-20, 20), magnitudes(-30, 2))),
        ("dyn_matmul", lambda n: [(n, 13), (13, 7)], matmul_ref, rand),
        ("dyn_matmul_k", lambda n: [(7, n), (n, 13)], matmul_ref, rand),
        ("dyn_reduce_rows", lambda n: [(n, 13)], rows_ref, rand),
        ("dyn_reduce_cols", lambda n: [(n, 13)], lambda x: Expected(x.astype(np.float64).max(axis=0), np.float32),
         rand),
        ("dyn_softmax", lambda n: [(n, 13)], softmax_ref, uniform(-10, 10)),
        ("dyn_transpose", lambda n: [(n, 13)], lambda x: Expected(x.T, np.float32), rand),
    ]
    cases = []
    for name, shapes, ref, maker in specs:
        for n in DYNAMIC_SIZES:
            def make(rng, shapes=shapes(n), ref=ref, maker=maker):
                inputs = [maker(s, rng) for s in shapes]
                return inputs, [ref(*inputs)]
            cases.append(Case(name, " ".join(shape_name(s) for s in shapes(n)), make))
    return [Family("dynamic", DYNAMIC_SOURCE.lstrip(), cases)]


# Integer and quantized contractions, gathers and tensor ops -------------------


def generic_case(name, label, arg_types, result_type, lines, make):
    """A function of %x0, %x1, ... (arg_types) returning %r; make(rng) -> (inputs, expected)."""
    text = function(name, [("x%d" % i, t) for i, t in enumerate(arg_types)], [("%r", result_type)], lines)
    return text, Case(name, label, make)


def integer_contraction_families():
    fams = []
    for t, maker in [("i8", integers(-128, 127, "i8")), ("i32", integers(-1000, 1000))]:
        items = []
        for m, n, k in [(1, 1, 1), (7, 13, 5), (1, 1000, 7), (13, 7, 1000)]:
            at, bt, ot = tensor_type((m, k), t), tensor_type((k, n), t), tensor_type((m, n), "i32")

            def make(rng, m=m, n=n, k=k, maker=maker):
                a, b = maker((m, k), rng), maker((k, n), rng)
                values = a.astype(np.int64) @ b.astype(np.int64)
                return [a, b], [Expected(wrap_int(values, "i32"), np.int32)]
            items.append(generic_case(
                "matmul_%s_%dx%dx%d" % (t, m, n, k), "%dx%dx%d %s to i32" % (m, n, k, t), [at, bt], ot,
                init("r0", (m, n), "0", "i32") +
                ["%%r = linalg.matmul ins(%%x0, %%x1 : %s, %s) outs(%%r0 : %s) -> %s" % (at, bt, ot, ot)], make))
        fams.append(build_family("linalg.matmul_" + t, items))

    items = []
    for m, n, k in [(1, 1, 1), (7, 13, 5), (13, 7, 1000)]:
        at, bt, ot = tensor_type((m, k), "i8"), tensor_type((k, n), "i8"), tensor_type((m, n), "i32")

        def make(rng, m=m, n=n, k=k):
            a, b = integers(-128, 127, "i8")((m, k), rng), integers(-128, 127, "i8")((k, n), rng)
            values = (a.astype(np.int64) - 3) @ (b.astype(np.int64) + 5)
            return [a, b], [Expected(wrap_int(values, "i32"), np.int32)]
        items.append(generic_case(
            "quantized_matmul_%dx%dx%d" % (m, n, k), "%dx%dx%d zero points 3, -5" % (m, n, k), [at, bt], ot,
            init("r0", (m, n), "0", "i32") + [
                "%za = arith.constant 3 : i32", "%zb = arith.constant -5 : i32",
                "%%r = linalg.quantized_matmul ins(%%x0, %%x1, %%za, %%zb : %s, %s, i32, i32) outs(%%r0 : %s) -> %s"
                % (at, bt, ot, ot)], make))
    fams.append(build_family("linalg.quantized_matmul", items))

    items = []
    for m1, n1, k1, m0, n0, k0 in [(1, 1, 1, 1, 1, 1), (2, 3, 5, 4, 7, 3), (3, 1, 13, 8, 16, 1)]:
        at = tensor_type((m1, k1, m0, k0), "f32")
        bt = tensor_type((n1, k1, n0, k0), "f32")
        ot = tensor_type((m1, n1, m0, n0), "f32")

        def make(rng, dims=(m1, n1, k1, m0, n0, k0)):
            m1, n1, k1, m0, n0, k0 = dims
            a, b = rand((m1, k1, m0, k0), rng), rand((n1, k1, n0, k0), rng)
            x, y = f64(a, b)
            values = np.einsum("mkab,nkcb->mnac", x, y)
            return [a, b], [summed(values, np.einsum("mkab,nkcb->mnac", np.abs(x), np.abs(y)), k1 * k0)]
        items.append(generic_case(
            "mmt4d_%d" % len(items), "%s * %s" % (at, bt), [at, bt], ot,
            init("r0", (m1, n1, m0, n0), "0.0") +
            ["%%r = linalg.mmt4d ins(%%x0, %%x1 : %s, %s) outs(%%r0 : %s) -> %s" % (at, bt, ot, ot)], make))
    fams.append(build_family("linalg.mmt4d", items))
    return fams


def gather_and_tensor_families():
    fams = []
    # An embedding lookup: rows of a table picked by i32 indices (tensor.extract in a generic).
    items = []
    for n, rows, cols in [(1, 1, 1), (7, 13, 5), (1000, 13, 7), (13, 1000, 1)]:
        tt, it, ot = tensor_type((rows, cols), "f32"), tensor_type((n,), "i32"), tensor_type((n, cols), "f32")

        def make(rng, n=n, rows=rows, cols=cols):
            table, index = rand((rows, cols), rng), rng.integers(0, rows, size=n).astype(np.int32)
            return [table, index], [Expected(table[index], np.float32)]
        items.append(generic_case("gather_%d" % n, "%d rows of %dx%d" % (n, rows, cols), [tt, it], ot, [
            "%%e = tensor.empty() : %s" % ot,
            "%%r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], "
            "iterator_types = [\"parallel\", \"parallel\"]} ins(%%x1 : %s) outs(%%e : %s) {" % (it, ot),
            "^bb0(%k: i32, %o: f32):",
            "  %row = arith.index_cast %k : i32 to index",
            "  %col = linalg.index 1 : index",
            "  %%v = tensor.extract %%x0[%%row, %%col] : %s" % tt,
            "  linalg.yield %v : f32",
            "} -> %s" % ot], make))
    fams.append(build_family("gather", items))

    # linalg.index: out[i, j] = i * 1000 + j.
    items = []
    for shape in [(1, 1), (7, 13), (13, 1000)]:
        ot = tensor_type(shape, "i32")
        items.append(generic_case(
            "index_%s" % shape_name(shape), shape_name(shape), [], ot, [
                "%%e = tensor.empty() : %s" % ot,
                "%%r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], "
                "iterator_types = [\"parallel\", \"parallel\"]} outs(%%e : %s) {" % ot,
                "^bb0(%o: i32):",
                "  %i = linalg.index 0 : index", "  %j = linalg.index 1 : index",
                "  %c = arith.constant 1000 : index",
                "  %k = arith.muli %i, %c : index", "  %l = arith.addi %k, %j : index",
                "  %v = arith.index_cast %l : index to i32",
                "  linalg.yield %v : i32",
                "} -> %s" % ot],
            lambda rng, shape=shape: ([], [Expected(np.arange(shape[0])[:, None] * 1000 + np.arange(shape[1]),
                                                    np.int32)])))
    fams.append(build_family("linalg.index", items))

    same = lambda *arrays: [Expected(a, np.float32) for a in arrays]
    items = []
    for shape, low, high in [((7, 13), (1, 2), (1, 1)), ((1, 1), (0, 0), (0, 1)), ((1000, 1), (0, 3), (2, 0))]:
        out = tuple(d + lo + hi for d, lo, hi in zip(shape, low, high))
        xt, ot = tensor_type(shape, "f32"), tensor_type(out, "f32")

        def make(rng, shape=shape, low=low, high=high):
            x = rand(shape, rng)
            return [x], same(np.pad(x, list(zip(low, high)), constant_values=-0.5))
        items.append(generic_case("pad_%s" % shape_name(shape), "%s low %s high %s" % (
            shape_name(shape), list(low), list(high)), [xt], ot, [
                "%c = arith.constant -0.5 : f32",
                "%%r = tensor.pad %%x0 low[%d, %d] high[%d, %d] {" % (low + high),
                "^bb0(%i: index, %j: index):", "  tensor.yield %c : f32",
                "} : %s to %s" % (xt, ot)], make))
    # A padding value that depends on the element's indices (i - 2j).
    xt, ot = tensor_type((5, 6), "f32"), tensor_type((8, 9), "f32")
    items.append(generic_case("pad_by_index", "5x6 low [2, 1] high [1, 2], i - 2j", [xt], ot, [
        "%c2 = arith.constant 2 : index",
        "%r = tensor.pad %x0 low[2, 1] high[1, 2] {",
        "^bb0(%i: index, %j: index):",
        "  %jj = arith.muli %j, %c2 : index",
        "  %d = arith.subi %i, %jj : index",
        "  %di = arith.index_cast %d : index to i32",
        "  %v = arith.sitofp %di : i32 to f32",
        "  tensor.yield %v : f32",
        "} : %s to %s" % (xt, ot)],
        lambda rng: (lambda x: ([x], same(np.where(
            np.pad(np.ones((5, 6), bool), [(2, 1), (1, 2)]), np.pad(x, [(2, 1), (1, 2)]),
            np.arange(8)[:, None] - 2.0 * np.arange(9)[None, :]))))(rand((5, 6), rng))))
    for dim, a, b in [(0, (7, 13), (1, 13)), (1, (7, 13), (7, 1000)), (1, (1, 1), (1, 1))]:
        out = tuple(x + y if i == dim else x for i, (x, y) in enumerate(zip(a, b)))
        at, bt, ot = tensor_type(a, "f32"), tensor_type(b, "f32"), tensor_type(out, "f32")

        def make(rng, a=a, b=b, dim=dim):
            x, y = rand(a, rng), rand(b, rng)
            return [x, y], same(np.concatenate([x, y], axis=dim))
        items.append(generic_case("concat_%d_%s" % (dim, shape_name(b)), "%s and %s along %d" % (
            shape_name(a), shape_name(b), dim), [at, bt], ot,
            ["%%r = tensor.concat dim(%d) %%x0, %%x1 : (%s, %s) -> %s" % (dim, at, bt, ot)], make))
    xt = tensor_type((13, 1000), "f32")
    items.append(generic_case(
        "extract_slice", "13x1000 [2:9:3, 5:999:7]", [xt], tensor_type((3, 142), "f32"),
        ["%%r = tensor.extract_slice %%x0[2, 5] [3, 142] [3, 7] : %s to tensor<3x142xf32>" % xt],
        lambda rng: (lambda x: ([x], same(x[2:9:3, 5:999:7])))(rand((13, 1000), rng))))
    items.append(generic_case(
        "insert_slice", "7x13 into 13x1000 at [3, 500]", [tensor_type((7, 13), "f32"), xt], xt,
        ["%%r = tensor.insert_slice %%x0 into %%x1[3, 500] [7, 13] [1, 1] : tensor<7x13xf32> into %s" % xt],
        lambda rng: (lambda x, y: ([x, y], same(np.concatenate([y[:3], np.concatenate(
            [y[3:10, :500], x, y[3:10, 513:]], axis=1), y[10:]]))))(rand((7, 13), rng), rand((13, 1000), rng))))
    items.append(generic_case(
        "collapse_expand", "7x13 to 91, negf, to 13x7", [tensor_type((7, 13), "f32")], tensor_type((13, 7), "f32"), [
            "%c = tensor.collapse_shape %x0 [[0, 1]] : tensor<7x13xf32> into tensor<91xf32>",
            "%e = tensor.empty() : tensor<91xf32>",
            "%n = linalg.negf ins(%c : tensor<91xf32>) outs(%e : tensor<91xf32>) -> tensor<91xf32>",
            "%r = tensor.expand_shape %n [[0, 1]] output_shape [13, 7] : tensor<91xf32> into tensor<13x7xf32>"],
        lambda rng: (lambda x: ([x], same(-x.reshape(13, 7))))(rand((7, 13), rng))))
    fams.append(build_family("tensor", items))

    # linalg.pack (lowered to pad, reshape and transpose in the input phase).
    xt, ot = tensor_type((7, 13), "f32"), tensor_type((2, 4, 4, 4), "f32")

    def pack_make(rng):
        x = rand((7, 13), rng)
        padded = np.pad(x, ((0, 1), (0, 3)))
        return [x], same(padded.reshape(2, 4, 4, 4).transpose(0, 2, 1, 3))
    fams.append(build_family("linalg.pack", [generic_case(
        "pack", "7x13 in 4x4 tiles", [xt], ot, [
            "%z = arith.constant 0.0 : f32", "%%e = tensor.empty() : %s" % ot,
            "%%r = linalg.pack %%x0 padding_value(%%z : f32) inner_dims_pos = [0, 1] inner_tiles = [4, 4] "
            "into %%e : %s -> %s" % (xt, ot)], pack_make)]))

    # Tensors of index at function boundaries (see UNSUPPORTED).
    fams.append(build_family("index_tensor_argument", [generic_case(
        "index_argument", "tensor<7xindex>", [tensor_type((7,), "index")], tensor_type((7,), "f32"), [
            "%e = tensor.empty() : tensor<7xf32>",
            "%r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], "
            "iterator_types = [\"parallel\"]} ins(%x0 : tensor<7xindex>) outs(%e : tensor<7xf32>) {",
            "^bb0(%i: index, %o: f32):",
            "  %j = arith.index_cast %i : index to i32", "  %v = arith.sitofp %j : i32 to f32",
            "  linalg.yield %v : f32",
            "} -> tensor<7xf32>"], None)]))
    return fams


def all_families():
    return (elementwise_ops() + contraction_families() + integer_contraction_families() + conv_families()
            + movement_families() + reduce_families() + softmax_families() + named_elementwise_families()
            + gather_and_tensor_families() + tosa_families() + dynamic_families())


# ---------------------------------------------------------------------------
# Running


def run_tool(cmd):
    """(True, output) or (False, (exit status, output))."""
    result = subprocess.run(cmd, capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    if result.returncode == 0:
        return True, output
    status = result.returncode
    if status < 0:
        status = "signal %d (%s)" % (-status, signal.Signals(-status).name)
    return False, (status, output)


def first_lines(text, count=6):
    lines = text.splitlines()
    return "\n    ".join(lines[:count] + (["..."] if len(lines) > count else []))


def input_flag(path, x):
    if isinstance(x, np.generic) and np.ndim(x) == 0:
        t = "f32" if x.dtype == np.float32 else "i32"
        return "--input=%s=%r" % (t, x.item())
    np.save(path, x)
    return "--input=@" + path


class Results:
    def __init__(self):
        self.passed = 0
        self.failures = []
        self.expected_failures = 0  # checks
        self.known = {}  # KNOWN_FAILURES key -> its reason, for those seen failing
        self.unsupported = 0
        self.worst = {}  # op -> (max ulp, max relative error)

    def fail(self, message):
        print("FAIL " + message)
        self.failures.append(message)


def check_family(fam, args, results):
    KNOWN_FAILURES = {"vulkan": KNOWN_FAILURES_VULKAN, "cuda": KNOWN_FAILURES_CUDA,
                      "rocm": KNOWN_FAILURES_ROCM}.get(
        args.target, globals()["KNOWN_FAILURES"])
    base = os.path.join(args.work, fam.name.replace(".", "_"))
    source, module = base + ".mlir", base + ".smod"
    with open(source, "w") as f:
        f.write(fam.source)
    executables = base + ".executables"
    if args.run_only:
        # Compiled by an earlier --compile-only (elsewhere); a family that
        # did not compile there has no module.
        if not os.path.exists(module):
            print("skip %s: no module (the compile-only run checked it)" % fam.name)
            return
        ok, output = True, None
    else:
        ok, output = run_tool([os.path.join(args.bin, "compile-module"), source, "-o", module,
                               "--target=" + args.target, "--dump-executables=" + executables]
                              + fam.flags + args.compile_flag)
    if ok and args.target == "vulkan" and not args.run_only:
        # Every SPIR-V kernel must validate for the Vulkan 1.3 environment.
        valid, message = run_tool(["spirv-val", "--target-env", "vulkan1.3",
                                   os.path.join(executables, "kernels.vulkan-spirv.spv")])
        if not valid:
            results.fail("%s: spirv-val refuses its SPIR-V:\n    %s" % (fam.name, first_lines(message[1])))
            return
    if ok and args.target == "rocm" and not args.run_only:
        # Every code object reads back (comgr, LLVM) as the metadata says.
        matches, message = run_tool([os.path.join(args.bin, "rocm-code-objects"), module])
        if not matches:
            results.fail("%s: its ROCm code objects do not match their metadata:\n    %s" % (
                fam.name, first_lines(message[1])))
            return
    if ok and args.target == "cuda" and not args.run_only and PTXAS:
        # ptxas made a cubin of every PTX image: each kernel assembles for
        # each arch.
        # (The default archs, or, with other flags, every arch there is PTX for.)
        expected = ("sm_80", "sm_90") if not args.compile_flag else [
            f[len("kernels."):-len(".ptx")] for f in os.listdir(executables) if f.endswith(".ptx")]
        for arch in expected:
            if not os.path.exists(os.path.join(executables, "kernels.%s.cubin" % arch)):
                results.fail("%s: no %s cubin although ptxas is at %s" % (fam.name, arch, PTXAS))
                return
    if fam.name in UNSUPPORTED:
        if ok or UNSUPPORTED[fam.name] not in output[1]:
            results.fail("%s: expected the diagnostic \"%s\", got %s" % (
                fam.name, UNSUPPORTED[fam.name], "a module" if ok else first_lines(output[1])))
        else:
            print("ok %s: unsupported, rejected with \"%s\"" % (fam.name, UNSUPPORTED[fam.name]))
            results.unsupported += 1
        return
    known_family = KNOWN_FAILURES.get(fam.name)
    if not ok:
        output = output[1]
        if known_family and known_family[1] in output:
            print("xfail %s: %s\n    %s" % (fam.name, known_family[0], first_lines(output, 2)))
            results.expected_failures += 1
            results.known[fam.name] = known_family[0]
        else:
            results.fail("%s does not compile (%s):\n    %s" % (fam.name, source, first_lines(output)))
        return
    if args.compile_only:
        print("ok %s: compiles for %s" % (fam.name, args.target))
        results.passed += 1
        return
    family_failed = False
    rng = np.random.default_rng(zlib.crc32(fam.name.encode()))
    for number, case in enumerate(fam.cases):
        inputs, expected = case.make(rng)
        stem = "%s.%d" % (base, number)
        flags = [input_flag("%s.in%d.npy" % (stem, i), x) for i, x in enumerate(inputs)]
        key = "%s.%s" % (fam.name, case.function)
        known = KNOWN_FAILURES.get(key) or known_family
        failed = []
        for device in args.devices.split(","):
            name = "%s %s [%s] on %s" % (fam.name, case.label, case.function, device)
            outs = ["%s.%s.out%d.npy" % (stem, device, i) for i in range(len(expected))]
            ok, output = run_tool([os.path.join(args.bin, "run-module"), "--module=" + module,
                                   "--function=" + case.function, "--device=" + device, "--print-max-elements=0"]
                                  + flags + ["--output=@" + out for out in outs])
            if not ok:
                failed.append("%s: run-module failed (exit status %s):\n    %s" % (
                    name, output[0], first_lines(output[1])))
                continue
            try:
                errors = [compare(np.load(out), want) for out, want in zip(outs, expected)]
            except Mismatch as mismatch:
                failed.append("%s: %s" % (name, mismatch))
                continue
            print("ok %s: %s" % (name, describe(errors, expected[0].mode)))
            results.passed += 1
            if fam.stat:
                worst = results.worst.get(fam.name, (0.0, 0.0))
                results.worst[fam.name] = (max(worst[0], errors[0][2]), max(worst[1], errors[0][1]))
        if failed and known and all(known[1] in message for message in failed):
            print("xfail %s: %s\n    %s" % (key, known[0], failed[0]))
            results.expected_failures += len(failed)
            results.known[key if key in KNOWN_FAILURES else fam.name] = known[0]
            family_failed = True
        else:
            for message in failed:
                results.fail(message)
            if not failed and key in KNOWN_FAILURES:
                results.fail("%s passes now: remove it from KNOWN_FAILURES" % key)
    if known_family and not family_failed:
        results.fail("%s passes now: remove it from KNOWN_FAILURES" % fam.name)


def describe(errors, mode):
    abs_err, rel_err, ulp_err, ratio = (max(e[i] for e in errors) for i in range(4))
    if mode == "exact" or abs_err == 0:
        return "exact"
    if mode == "ulp":
        return "max error %.2f ulp (relative %.2g)" % (ulp_err, rel_err)
    return "max abs error %.2g (%.2f of the bound)" % (abs_err, ratio)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--target", default="cpu", help="compile-module --target")
    parser.add_argument("--devices", default=",".join(DEVICES), help="run on each of these")
    parser.add_argument("--compile-only", action="store_true",
                        help="compile each family (for a target with no device here) without running it")
    parser.add_argument("--run-only", action="store_true",
                        help="run the modules an earlier --compile-only left in --work (on a machine "
                             "with the device and no compiler)")
    parser.add_argument("--compile-flag", action="append", default=[],
                        help="one more compile-module flag for every family (--cuda-arch=sm_90a)")
    parser.add_argument("--shard", default="0/1", metavar="I/N",
                        help="only every Nth family from the Ith (to run N processes side by side)")
    parser.add_argument("family", nargs="*", help="only the families whose names start with one of these")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    families = all_families()
    names = [f.name for f in families]
    assert len(set(names)) == len(names), "duplicate family names"
    for key in list(KNOWN_FAILURES) + list(KNOWN_FAILURES_VULKAN) + list(KNOWN_FAILURES_CUDA) + list(UNSUPPORTED):
        assert key in names or key.rsplit(".", 1)[0] in names, "no family for " + key
    if args.family:
        families = [f for f in families if any(f.name.startswith(p) for p in args.family)]
    shard, shards = (int(x) for x in args.shard.split("/"))
    families = families[shard::shards]
    results = Results()
    for fam in families:
        check_family(fam, args, results)
    if results.worst:
        print("largest errors of the functions that are not correctly rounded (normal range):")
        for name, (ulp, rel) in sorted(results.worst.items()):
            print("  %-28s %6.2f ulp  relative %.3g" % (name, ulp, rel))
    if results.known:
        print("known failures, still failing:")
        reasons = {}
        for key, reason in results.known.items():
            reasons.setdefault(reason, []).append(key)
        for reason, keys in reasons.items():
            print("  %s: %s" % (", ".join(keys), reason))
    print("%d checks passed, %d checks of %d known failures failed as expected, %d unsupported ops "
          "rejected, %d failures" % (results.passed, results.expected_failures, len(results.known),
                                     results.unsupported, len(results.failures)))
    if results.failures:
        print("failures:")
        for message in results.failures:
            print("  " + message.splitlines()[0])
        sys.exit(1)


if __name__ == "__main__":
    main()
