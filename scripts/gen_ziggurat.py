#!/usr/bin/env python3
"""Writes kernels/math/ziggurat_table.hpp: the layers of the 256-layer
ziggurat for the standard normal (Marsaglia & Tsang 2000, "The ziggurat
method for generating random variables", J. Stat. Softw. 5(8)), solved at
60 digits with mpmath and rounded once to double.

f(x) = exp(-x^2 / 2). Layer 0 is the base: the rectangle [0, r] x [0, f(r)]
with the tail beyond r, of area V = r f(r) + int_r^inf f; layers 1..255 are
rectangles of the same area V, layer i of width x_i between heights f(x_i)
and f(x_{i+1}). x_0 = V / f(r) (the base's width as a rectangle), x_1 = r,
x_{i+1} = f^-1(f(x_i) + V / x_i), x_256 = 0; r is the root that makes the
top layer close exactly (f(x_255) + V / x_255 = 1).

Usage: python3 scripts/gen_ziggurat.py > kernels/math/ziggurat_table.hpp
"""
import mpmath as mp

mp.mp.dps = 60
LAYERS = 256


def f(x):
    return mp.exp(-x * x / 2)


def layers(r):
    v = r * f(r) + mp.sqrt(mp.pi / 2) * mp.erfc(r / mp.sqrt(2))
    x = [v / f(r), r]
    for _ in range(LAYERS - 2):
        y = f(x[-1]) + v / x[-1]
        if y >= 1:
            return v, x, y
        x.append(mp.sqrt(-2 * mp.log(y)))
    return v, x, f(x[-1]) + v / x[-1]


def closure(r):
    return layers(r)[2] - 1


r = mp.findroot(closure, mp.mpf("3.6541528853610088"), tol=mp.mpf(10) ** -50)
v, x, _ = layers(r)
x.append(mp.mpf(0))
fx = [f(t) for t in x]
fx[0] = mp.mpf(0)  # unused: the base is not a rectangle of height f(x_0)


def hexes(values):
    out = []
    for i in range(0, len(values), 3):
        out.append("    " + " ".join(float(t).hex() + "," for t in values[i:i + 3]))
    return "\n".join(out)


print(f"""// ziggurat_table.hpp: the layers of the 256-layer ziggurat for the
// standard normal -- written by scripts/gen_ziggurat.py (mpmath, 60 digits,
// each value rounded once to double); do not edit. r = {mp.nstr(r, 20)},
// layer area V = {mp.nstr(v, 20)}. sampling.hpp's draw_normal reads them.
#pragma once

#include "special.hpp"  // DIRMN_HD

namespace dirmn {{
namespace math {{

constexpr int kZigguratLayers = {LAYERS};
constexpr double kZigguratR = {float(r).hex()};

// x_i: layer i's width (x_0: the base's, V / f(r)); x_256 = 0. Global
// memory on the device (each thread reads its own layer: constant memory
// would serialise a warp's different addresses).
#ifdef __CUDA_ARCH__
__device__
#endif
constexpr double kZigguratX[{LAYERS + 1}] = {{
{hexes(x)}
}};

// f(x_i) = exp(-x_i^2 / 2) (entry 0 unused).
#ifdef __CUDA_ARCH__
__device__
#endif
constexpr double kZigguratF[{LAYERS + 1}] = {{
{hexes(fx)}
}};

}}  // namespace math
}}  // namespace dirmn""")
