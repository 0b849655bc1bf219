"""The front end's error messages: every syntax or type error names the file, line and column, shows
the source line (format_error), and says what is wrong in words a Futhark user understands."""

import subprocess
import sys

import pytest

from incflat.ir.errors import CompileError, format_error
from incflat.pipeline import source_program
from incflat.ir.source import Loc

# (source, line, column, words the message must contain)
BAD = [
    ('def f (x: i32): i32 =\n  let y = x + 1\n  in in y', 3, 6, ['Syntax error', 'unexpected token "in"']),
    ('def f (x: i32): i32 = x @ 2', 1, 25, ['Syntax error', '"@"']),
    ('def f (x: i32): i32 = let y = x', 1, 32, ['Syntax error', 'end of file']),
    ('def f (x: i32): i32 =\n  let a = 1\n  let b = 2', 3, 12, ['Syntax error', 'end of file']),
    ('def f (x: i32): i32 = let y = x + in y', 1, 35, ['Syntax error', '"in"']),
    ('def f (x: i32): i32 = if x > 0 then 1', 1, 38, ['Syntax error', '"else"']),
    ('def f (x: i32): i32 = loop acc = 0 for i < 10 acc + i', 1, 54, ['Syntax error', '"do"']),
    ('def f (x: i32): i32 = loop acc = 0 for i <= 10 do acc + i', 1, 42, ['Syntax error', '"<="', 'for i < n']),
    ('def f (x: i32): i32 = loop acc = 0 do acc', 1, 36, ['Syntax error', 'for i < n', 'while']),
    ('def f (x: i32): i32 =\n  loop acc = 0\n  do acc', 3, 3, ['Syntax error', 'for i < n', 'while']),
    # LALR expects "for" here too (a union over contexts), but no loop was written: the hint is about sizes
    ('entry main (k: i64) [n] (xs: [n]i64): [n]i64 = xs', 1, 21, ['Syntax error', 'size parameters', 'before']),
    ('type t = (i32, f32', 1, 19, ['Syntax error', 'end of file']),
    ('def f (x: i32): i32 = match x case 1 -> 2', 1, 23, ['Unmatched cases in match expression', 'matches 0.']),
    ('def f (x: i32): (i32, i32, i32) = (x, x, i64.i32 x)', 1, 35, ['declared to return', '(element 3 is i64, declared i32)']),
    ('def f (x: i32): {a: i32, b: i32, c: i32} = {a = x, b = 1.0, c = x}', 1, 44, ['(field b is decimal literal, declared i32)']),
    ('def f (x: i32): {a: i32, b: i32, c: i32} = {a = x, b = x, d = x}', 1, 44, ['declared to return', 'type {a: i32, b: i32, d: i32}.']),
    ('import "lib"\ndef f (x: i32) = x', 1, 1, ['cannot read the imported file lib.fut']),
    ('def f (x: i32) = x\n\nimport "common"\n', 3, 1, ['cannot read the imported file common.fut']),  # after a body
    ('def f (x: i32) = "a\\qb"', 1, 18, ['Invalid escape sequence \\q', '"a\\qb"']),
    ("def f (x: i32) = '\\9999999'", 1, 18, ['beyond the last Unicode code point']),
    ("def f (x: i32) = 'ab'", 1, 18, ['Syntax error', 'holds one character']),
    ("def f (x: i32) = 'a", 1, 18, ['Syntax error', 'holds one character']),
    ('def f (x: i32) = "ab\n"', 1, 18, ['unexpected character', 'ends on its line']),
    ("def f (x: i32): u8 = '\\300'", 1, 22, ['300', 'out of bounds', 'u8']),
    ('def f (x: f32) = vjp f32.sin x 1', 1, 18, ['"vjp" is not supported by incflat.']),
    # histograms of tuples and rows whose operator mixes components (pbbs convexHull's, smoothlife's)
    ('def op (a: i64, x: f32) (b: i64, y: f32) = if x >= y then (a, x) else (b, y)\n'
     'entry main (is: []i64) (vs: [](i64, f32)) = hist op (0, 0) 4 is vs', 2, 50,
     ['"hist" combines the components of its tuples together', 'each component on its own']),
    ('entry main (is: []i64) (vs: [][2]i32) = hist (\\x y -> if x[0] > y[0] then x else y) [0, 0] 4 is vs', 1, 47,
     ['on rows must be one map over the two rows']),
    ('entry main (z: [2]i32) (is: []i64) (vs: [][2]i32) = hist (map2 (+)) z 4 is vs', 1, 69,
     ['a row, must be written `replicate l x`']),
    ('def f (x: i32) = #[unsafe] x + {1}', 1, 34, ['Syntax error', '"}"', '"name = value"']),
    ('def f (xs: []i32): i32 = xs [0]', 1, 26, ['"xs"', 'not a function', 'xs[...]']),
    ('def f (x: i32) = (x, )', 1, 22, ['Syntax error']),
    ('def f (xs: []i32) = xs .0', 1, 24, ['Syntax error', 't.0 without a space']),
    ('def f (x: i32): f32 -> f32 = 1', 1, 30, ['not a function']),
    ('def f (x: i32) = []', 1, 18, ['empty array literal', 'cannot be inferred', '[] : []i32']),
    ('def f (x: i32): i32 = x +', 1, 26, ['Syntax error', 'end of file']),
    ('def f (x: i32): i32 = foo x', 1, 23, ['Unknown name "foo"']),
    ('def f (x: i32): i32 = f32.foo x', 1, 23, ['Unknown name "f32.foo"']),
    ('def f (x: i32): i32 = g x\ndef g (x: i32): i32 = x', 1, 23, ['Unknown name "g"', 'defined later']),
    ('def f (x: i32): i32 =\n  if x > 0 then f (x - 1) else 0', 2, 17, ['recursion']),
    ("def empty 'a (x: i64) = (x, [] : [0]a)\nentry main (x: i64): (i64, [0]i32) = empty x", 1, 32,
     ['empty array', 'type parameter', 'nothing has decided']),
    ('def f (arr: [](i32 -> i32)) = arr', 1, 13, ['array cannot hold functions']),
    ('entry add = map2 (f16.+)', 1, 19, ['f16 is not supported']),
    # literals out of their type's range, as Futhark's tests/overflowing (a negative one of an unsigned type too)
    ('def main : u8 = -4', 1, 17, ['-4', 'out of bounds', 'u8']),
    ('def main : f32 = 9.7e42', 1, 18, ['out of bounds', 'f32']),
    ('def main : f64 = 1.8e308', 1, 18, ['This literal', 'out of bounds', 'f64']),
    # tuples and records that hold functions: only their fields can be used
    ('entry main (x: i32) = let t = [(\\(y: i32) -> y, 1)] in x', 1, 32, ['holds a function', 'array element']),
    ('entry main (x: i32) = let t = (\\(y: i32) -> y, 1) in t x', 1, 54, ['holds a function', 'cannot be applied']),
    ('entry main (x: i32) = let t = (\\(y: i32) -> y, 1) in t', 1, 23, ['holds a function', 'result of the entry']),
    ('entry main (xs: []i32) = let t = (\\(y: i32) -> y, 1) in map t xs', 1, 61, ['holds a function', 'takes 0']),
    ('entry main (n: i64) = let z = rep 3i32 in length z + n', 1, 31, ['"rep"', 'not decided by its use']),
    ('entry main (n: i64) = let z = rep 3i32 in z', 1, 31, ['"rep"', 'not decided by its use']),
    # recursion through functions inlined at each call (Futhark's tests/higher-order-functions/recursion*.fut)
    ('def rep (n: i64) (f: i64 -> i64) (x: i64): i64 = if n == 0 then x else rep (n - 1) f (f x)\n'
     'entry main (x: i64) = rep 3 (\\y -> y + 1) x', 1, 72, ['"rep" calls itself', 'recursive']),
    ('def a g (n: i64): i64 = if n == 0 then 0 else b g (n - 1)\ndef b g (n: i64): i64 = a g n\n'
     'entry main (n: i64) = a (\\y -> y) n', 2, 25, ['"a" calls itself (through "b")']),
    ('def f (x: i32): i32 = x\ndef f (x: i32): i32 = x', 2, 5, ['Duplicate definition of "f"']),
    ('entry f (xs: []i32) (xs: []i32) = 1', 1, 22, ['"xs"', 'bound twice']),
    ('def f (x: i32) = let (a, a) = (x, x) in a', 1, 26, ['"a"', 'bound twice']),
    ('def f (x: i32) = let g y = y + z in g x', 1, 32, ['Unknown name "z"']),
    ('def f (x: i32) = let g y = g y in g x', 1, 28, ['Unknown name "g"']),
    ('entry f (x): i32 = 1', 1, 10, ['"f"', 'cannot be inferred']),
    ('entry f x: i32 = 1', 1, 9, ['"f"', 'cannot be inferred']),
    ('entry main x = x', 1, 12, ['"main"', 'cannot be inferred', 'write it']),
    ('entry main (x: i32) = not x', 1, 27, ['"not"', 'bool', 'i32']),
    ('entry main (x: i64) = t32 x', 1, 27, ['"t32"', 'f32', 'i64']),
    ('entry main (x: i32) = iterate 2 (\\y -> (y, y)) x', 1, 34, ['"iterate"', 'must return', 'i32']),
    ('entry main (x: i32) (n: i64) = iterate n (*2) x', 1, 40, ['"iterate"', 'must have type i32', 'i64']),
    ('def N = 3i64\ndef M : i64 = N * 2\nentry main (xs: [N]i32) : [M]i32 = xs ++ xs', 3, 39,
     ['declared to return [M]i32', '[N+N]i32']),
    ('entry main (x: i32) = iterate_while (\\y -> y) (+1) x', 1, 38, ['predicate', 'bool', 'i32']),
    ('entry main (x: i32) = f32.recip x', 1, 33, ['"f32.recip"', 'f32', 'i32']),
    ("def same 't (x: t) (y: t): t = x\nentry main (a: i32) (b: f32) = same a b", 2, 39, ['"y"', 'i32', 'f32']),
    ("entry main 't (a: t): t = a", 1, 12, ['"main"', 'type parameters']),
    ("type pair 'a = (a, a)\ndef f (x: pair) = 1i32", 2, 11, ['takes 1 type argument', "('a)", 'given 0']),
    ('def f [n] (xs: [n*2]i32): i32 = 0\nentry main (xs: []i32) = f xs', 2, 26,
     ['"n"', 'not determined by the arguments', '[n]']),
    ('def mat [m] (v: i32): [m]i32 = replicate m v\nentry main (x: i32): [3]i32 = mat x', 2, 31,
     ['"m"', 'not determined by the arguments', '[m]']),
    ('def f [n] (a: [n]i32) (xs: [n*2f32]i32): i32 = 0', 1, 30, ['"*"', 'i64', 'f32']),
    ('def f [n] (x: i32): i32 = x\nentry main (x: i32) = f x + 1', 2, 23, ['"n"', 'not determined']),
    ('def f (xs: [n]f32): f32 = 1', 1, 12, ['Unknown size "n"']),
    ('def f (x: i32) : foo = x', 1, 18, ['Unknown type "foo"']),
    ('def f (x: t): i32 = 1', 1, 11, ['Unknown type "t"']),
    ('type m [n] = [n][k]f32', 1, 14, ['Unknown size "k"', 'type m']),
    ('type v [n] = [n]f32\ndef f (x: v): f32 = 1', 2, 11, ['"v"', '1 size argument', 'given 0']),
    ('def f (x: i32) = xs.foo', 1, 18, ['Unknown name "xs.foo"']),
    ('def f (x: (i32, i32)) = x.foo', 1, 27, ['tuple of type (i32, i32)', 'no field foo', '0 to 1']),
    ('def f (x: i32) (y: f32): i32 = x + y', 1, 34, ['"+"', 'different types', 'i32', 'f32']),
    ('def f [n] (xs: [n]f32): f32 =\n  map (+1) xs', 2, 3, ['declared to return f32', '[n]f32']),
    ('def f (x: i32): i32 = if x then 1 else 2', 1, 26, ['"if"', 'bool', 'i32']),
    ('def f (b: bool) (x: i32) (y: f32): i32 = if b then x else y', 1, 42, ['branches', 'different types']),
    ('def f (x: u8): u8 = x + 300', 1, 25, ['300', 'u8']),
    ('def f (x: i32): i32 = x 3', 1, 23, ['"x"', 'not a function']),
    ('def f (x: bool): bool = x + x', 1, 27, ['"+"', 'numeric', 'bool']),
    ('def f (x: f32): f32 = x // 2', 1, 25, ['"//"', 'integer', 'f32']),
    ('def f (x: f32) = x & 1', 1, 20, ['"&"', 'integer', 'f32']),
    ('def f (x: i32) = -true', 1, 18, ['Unary "-"', 'numeric', 'bool']),
    ('def f (x: f32): f32 = 1.5i32', 1, 23, ['decimal literal', 'i32']),
    ('def f (x: i32): f32 = x', 1, 23, ['declared to return f32', 'i32']),
    ('entry f (x: i32) = \\y -> y', 1, 20, ['"f"', 'cannot be inferred']),
    ('def f (g: i32 -> i32) = g 1\nentry main (x: i32) = f x', 2, 25, ['annotated as a function', 'i32']),
    ('def f x = x\nentry main = f', 2, 14, ['"main"', 'cannot be inferred']),
    ('def f (x: i32) = let g = \\y -> y in if x > 0 then g else g', 1, 37, ['branches', 'cannot be functions']),
    ('def f (x: i32) = f32.sqrt x', 1, 27, ['"f32.sqrt"', 'f32', 'i32']),
    ('def f (x: i64) = i32.popc x', 1, 27, ['"i32.popc"', 'expects an argument of type i32', 'i64']),
    ('def f (x: f32) = f32.get_bit x 1f32', 1, 30, ['"f32.get_bit"', 'argument 1 of type i32', 'f32']),
    ('def f (x: u8) = u8.set_bit 1 x 1u8', 1, 32, ['"u8.set_bit"', 'argument 3 of type i32', 'u8']),
    ('def f (x: i32) = f32.from_bits x', 1, 32, ['"f32.from_bits"', 'of type u32', 'i32']),
    ('def f (x: f64) = f64.fma x x 1f32', 1, 30, ['"f64.fma"', 'argument 3 of type f64', 'f32']),
    ('def f (x: f64) = f64.mul_hi x x', 1, 18, ['Unknown name "f64.mul_hi"']),
    ('def f (x: i32) = i32.gamma x', 1, 18, ['Unknown name "i32.gamma"']),
    ('def f [n] (is: [n]i64) (vs: [n]i8) = hist (\\a b -> a + b) 0i8 3 is vs', 1, 59, ['"hist"', '32- or 64-bit', 'builtin +', '[3]i8']),
    ('def f [n] (is: [n]i32) (vs: [n]i32) = hist (+) 0 3 is vs', 1, 52, ['indices passed to "hist"', '[]i64']),
    ('def f [n] (d: *[3]f32) (is: [n]i64) (vs: [n]i32) = reduce_by_index d (+) 0 is vs', 1, 79,
     ['values passed to "reduce_by_index"', '[n]i32', '[3]f32']),
    ('def f (xs: []i32) = partition (\\x -> x + 1) xs', 1, 32, ['predicate of "partition"', 'bool', 'i32']),
    ('def f (xs: []i32) = partition2 (\\x -> x > 1) (\\x -> x) xs', 1, 47, ['predicate of "partition2"', 'i32']),
    ('def f (xs: []i32) = split xs', 1, 27, ['"split"', 'sum n+m', '[]i32']),
    ('def f [n] (xs: [n]i64) = scatter_2d (replicate 2 (replicate 2 0i64)) xs xs', 1, 70,
     ['indices passed to "scatter_2d"', '[](i64, i64)', '[n]i64']),
    ('def f [n] (xs: [n](i64, i64)) = scatter_2d (replicate 2 0i64) xs (map (.0) xs)', 1, 45,
     ['destination of "scatter_2d"', '2 dimensions', '[2]i64']),
    ('def f (x: i32) = uncurry (+) x', 1, 30, ['Argument 2 of "uncurry"', 'pair', 'i32']),
    ('def f (x: i32) = flip 1 x x', 1, 23, ['first argument of "flip"', 'must be a function']),
    ('def f (xs: []i32) = foldr (\\x acc -> x) 0f32 xs', 1, 28, ['"foldr"', "accumulator's type f32", 'i32']),
    ('def f (n: i32) = tabulate_2d n 2 (\\i j -> i + j)', 1, 30, ['"tabulate_2d"', 'i64', 'i32']),
    ('def f (xs: []f32): f32 = i32.sum xs', 1, 34, ['"i32.sum"', '[]i32', '[]f32']),
    ('def f (x: (i32, i32)) = x + x', 1, 27, ['"+"', 'tuples']),
    ('def f (xs: []i32) = xs + 1', 1, 24, ['"+"', 'arrays', 'use map']),
    ('def f (x: i32) = let (y: f32) = x in y', 1, 23, ['"y"', 'annotated as f32', 'i32']),
    ('def f (x: i32) = (x : i64)', 1, 21, ['annotated as i64', 'i32']),
    ('def f (x: i32) = let g (a: f32) = a in g x', 1, 42, ['"a"', '"g"', 'annotated as f32', 'i32']),
    ('def f (x: i32): (i32, i32) = (x, x, x)', 1, 30, ['declared to return (i32, i32)', '(i32, i32, i32)']),
    ('def f (p: (i32, f32)): i32 = p.2', 1, 32, ['no field 2', '(i32, f32)']),
    ('def f (x: i32): i32 = x.0', 1, 25, ['field 0', 'only records and tuples']),
    ('def f (xs: []i32): i32 = let (a, b) = xs in a', 1, 30, ['tuple pattern has 2 elements', '[]i32']),
    ('def f (x: (i32, i32)): i32 = let (a, b, c) = x in a', 1, 34, ['tuple pattern has 3 elements', 'tuple of 2']),
    ('def f (x: i32): i32 = (\\(a, b) -> a) x', 1, 25, ['tuple pattern has 2 elements', 'i32']),
    ('def f [n] (xs: [n]i32) = map (\\(a, b) -> a) xs', 1, 32, ['tuple pattern has 2 elements', 'i32']),
    ('def f [n] (xs: [n]i32) (ys: [n]i32) = map (\\x y -> x) (zip xs ys)', 1, 44, ['"map"', '1 argument', 'takes 2']),
    ('def f (xs: [](i32, i32)) = unzip3 xs', 1, 35, ['"unzip3"', '3-tuples']),
    ('def f [n][m] (xs: [n]f32) (ys: [m]f32): [n]f32 = map2 (+) xs ys', 1, 50,
     ['Cannot apply "map2" to arrays of sizes [n] and [m]']),
    ('def f [n][m] (xs: [n]i32) (ys: [m]i32) = zip xs ys', 1, 42, ['"zip"', '[n] and [m]']),
    ('def f (xs: []i32) = map2 (+) (filter (>0) xs) (filter (<0) xs)', 1, 21, ['"map2"', 'not known to be equal']),
    ('def dot [n] (a: [n]f32) (b: [n]f32) : f32 = reduce (+) 0 (map2 (*) a b)\n'
     'entry main (xs: []f32) : f32 = dot (filter (>0) xs) (filter (<0) xs)', 2, 54,
     ['Argument 2 of "dot"', '[?]f32 is expected (size mismatch).', 'not known to be equal', ':>']),
    ('def f [n] (xs: [n]f32): [n]f32 = map (\\x y -> x + y) xs', 1, 39, ['"map"', '1 argument', 'takes 2']),
    ('def f [n] (xs: [n]f32): f32 = reduce (\\x -> x) 0 xs', 1, 39, ['"reduce"', '2 arguments', 'takes 1']),
    ('def f [n] (xs: [n]f32): f32 = reduce (+) 0i32 xs', 1, 42, ['neutral element', 'i32', 'f32']),
    ('def f [n] (xs: [n]i32): i32 = reduce (\\a b -> a < b) 0 xs', 1, 39,
     ['operator of "reduce"', 't -> t -> t', 'bool']),
    ('def f [n] (xs: [n]f32): [n]f32 = map f32.sqrt xs xs', 1, 34, ['"map"', '2 arguments', '3']),
    ('def f (x: i32): i32 = map (+1) x', 1, 32, ['"map"', 'must be an array', 'i32']),
    ('def f (x: i32): []i32 = map 1 [x]', 1, 29, ['"map"', 'must be a function']),
    ('def f (n: i64): [n]i64 = iota (n+1)', 1, 26, ['declared to return [n]i64', '[n+1]i64', 'size']),
    ('def f (x: i32): []i64 = iota x', 1, 30, ['"iota"', 'i64', 'i32']),
    ('def f (xs: []i32) = replicate 3i32 0', 1, 31, ['"replicate"', 'i64', 'i32']),
    ('def f [n] (xs: [n]i32) : [n]i32 = xs ++ xs', 1, 38, ['declared to return [n]i32', '[n+n]i32']),
    ('def f [n] (xs: [n]i64): [n][n]i64 = map (\\x -> iota x) xs', 1, 48, ['size', 'inside']),
    ('def d [n] (xs: [n]f32) (ys: [n]f32): f32 = 0\ndef f [n][m] (xs: [n]f32) (ys: [m]f32): f32 = d xs ys', 2, 52,
     ['Argument 2', '"d"', '[m]f32', '[n]f32']),
    ('def f (xs: []i32): []i32 = filter (\\x -> x + 1) xs', 1, 36, ['"filter"', 'bool', 'i32']),
    ('def f (xs: *[]i32): []i32 = scatter xs [0, 1] [1]', 1, 29, ['"scatter"', 'same size', '[2] and [1]']),
    ('def f (xs: *[]i32): []i32 = scatter xs [0i32] [1]', 1, 40, ['"scatter"', '[]i64']),
    ('def f (xs: []i32): [][]i32 = unflatten 2 2 xs', 1, 30, ['"unflatten"', 'takes only the array', '[n*m]']),
    ('def f (xs: []i32): [][]i32 = unflatten xs', 1, 40, ['"unflatten"', 'product', ':>']),
    ('def f (xs: []i32): []i32 = transpose xs', 1, 38, ['"transpose"', 'two dimensions']),
    ('def f (xs: []i32): []i32 = concat xs [1.0]', 1, 28, ['concatenate', 'different types']),
    ('def f (x: i32): [][]i32 = [[1, 2], [3]]', 1, 36, ['array literal', 'same size']),
    ('def f (x: i32) = [1, true]', 1, 22, ['array literal', 'same type']),
    ('def f (xs: []i32) = rotate 1.0 xs', 1, 28, ['"rotate"', 'i64']),
    ('def f (xs: []i32) = length 3', 1, 28, ['"length"', 'must be an array']),
    ('def f (xs: []f32) = (xs :> [3]i32)', 1, 25, ['coerce', 'only change sizes']),
    ('def f (xs: []i32) = foldl (+) 0 xs 1', 1, 21, ['"foldl"', '3 arguments', '4']),
    ('def f (xs: [][]i32): i32 = xs[0, 1, 2]', 1, 30, ['Too many indices', '3', 'rank 2']),
    ('def f (xs: []i32): i32 = xs[1.0]', 1, 29, ['index must be an integer', 'decimal']),
    ('def f (x: i32): i32 = x[0]', 1, 23, ['Only arrays can be indexed', 'i32']),
    ('def f (xs: []i32): []i32 = xs[1i32:]', 1, 31, ['start of a slice', 'i64', 'i32']),
    ('def f (xs: []i32): i32 = let ys = xs[::0] in 0', 1, 40, ['stride', 'zero']),
    ('def f (x: i32): i32 = x with [0] = 1', 1, 23, ['"with"', 'Only arrays', 'i32']),
    ('def f (xs: *[]i32): []i32 = xs with [0, 1] = 1', 1, 32, ['Too many indices', '2', 'rank 1']),
    ('def f (xs: *[]i32): []i32 = xs with [0] = 1.5', 1, 43, ['new value', 'decimal literal', 'i32']),
    ('def f (xs: *[][]i32): [][]i32 = xs with [0] = [1, 2, 3]', 1, 47, ['new value', 'size']),
    ('def f (xs: *[]i32): []i32 = xs with [0:2] = 1', 1, 45, ['new value', 'integer literal', '[2]i32']),
    ('def f (xs: []i32): []i32 = xs with [0:2] = [1, 2]', 1, 31, ['"xs"', 'in place', 'not declared unique']),
    ('def f (xs: *[][]i32): [][]i32 = xs with [:, 0] = [1.5]', 1, 50, ['new value', 'decimal literal', 'updated element has type []i32']),
    # slices' sizes are Futhark's size expressions, compared as written
    ('entry main [n] (xs: [n]f32) (i: i64) : []f32 = map2 (*) xs[:i + 1] xs[1:i + 2]', 1, 48,
     ['"map2"', '[i+1] and [(i+2)-1]']),
    ('def f (x: i32) : (i32, i32) = let t = (x, x) in t with [0] = 1', 1, 49, ['"with"', '(i32, i32)']),
    ('def f (xs: []i32): []i32 = xs with [0] = 1', 1, 31, ['"xs"', 'in place', 'not declared unique']),
    ('def f (xs: *[]i32): i32 = let ys = xs with [0] = 1 in xs[0]', 1, 55, ['"xs"', 'consumed', 'line 1, column']),
    ('def f [n] (ys: *[n]i32): [n]i32 = map (\\i -> let zs = ys with [i] = 1 in zs[0]) (iota n)', 1, 58,
     ['"ys"', 'inside the function passed to "map"', 'copy']),
    ('def f (n: i64) (xs: *[]i32): []i32 = loop acc = replicate n 0i32 for i < n do xs with [i] = 1', 1, 82,
     ['"xs"', 'loop body']),
    ('def f (xs: []i32) = let ys = xs[1:] let ys[0] = 2 in ys', 1, 43, ['"ys"', '"xs"', 'not declared unique']),
    ('def f (x: i32) = loop (a, b) = (1, 2, 3) for i < 3 do (a, b)', 1, 23,
     ['tuple pattern has 2 elements', '3 elements']),
    ('def f (x: i32) = loop (a, b) = (1, 2) for i < 3 do a', 1, 52, ['loop body returns', 'loop parameters']),
    ('def f (x: i32) = loop y for i < 3 do y', 1, 23, ['"y"', 'no initial value']),
    ('def f (x: i64) = loop xs = iota x for y in 5 do xs', 1, 44, ['for-in loop', 'array']),
    ('def f (x: i64) = loop (xs: [x]i64) = iota x for i < 2 do xs ++ xs', 1, 61,
     ['loop body returns', '[x]i64', 'size']),
    ('def f (x: f32) = loop acc = 0 for i < x do acc', 1, 39, ['bound of a for loop', 'integer', 'f32']),
    ('def f (x: i32) = loop acc = 0 while acc do acc + 1', 1, 37, ['"while"', 'bool']),
    ('def f (x: i32) = loop f = (\\y -> y) for i < 3 do f', 1, 18, ['loop parameter', 'function']),
    # operators: user-defined, qualified, backquoted, composition; sections; array equality
    ('def (&&) (a: bool) (b: bool): bool = a', 1, 6, ['"&&"', 'cannot be defined', 'short-circuit']),
    ('def f (x: i32): i32 = x +^ 1', 1, 25, ['Unknown operator "+^"']),
    ('def f (x: i32): i32 = x i32.+ 1i64', 1, 25, ['"i32.+"', 'type i32', 'i64']),
    ('def f (x: f32): f32 = x f32.& x', 1, 25, ['f32', 'no operator "&"']),
    ('def f (x: i32): i32 = x i32.+& 1', 1, 25, ['Unknown operator "i32.+&"']),
    ('def f (x: i32): i32 = x `g` 1', 1, 26, ['Unknown name "g"']),
    ('def f (x: i32): i32 = 1 `x` 2', 1, 26, ['"x"', 'not a function']),
    ('def f (x: i32) = map (`x` 1) [1]', 1, 24, ['"x"', 'not a function', 'operator']),
    ('def f (x: i32) = map (x >-> (+1)) [1]', 1, 23, ['">->"', 'must be functions']),
    ('def (+^) (a: i32) (b: i32): i32 = a\ndef f (x: f32) = x +^ x', 2, 20, ['Argument 1 of "+^"', 'i32']),
    ('def f (xs: []i32) (ys: []f32) = xs == ys', 1, 36, ['"=="', 'different types']),
    ('def f (xs: []i32) (ys: [][]i32) = xs != ys', 1, 38, ['"!="', 'different types']),
    ('def f (xs: []i32) = map (.[0, 1]) [xs]', 1, 25, ['Too many indices']),
    ('def f (x: i32) = [] : i32', 1, 21, ['empty array literal', 'i32']),
    ('def f (x: i32) = [] : [2]i32', 1, 21, ['empty array literal', 'size 0']),
    ('def f (x: i32) = let () = x in 1', 1, 22, ['0 elements', 'i32']),
    ('def f (): i32 = ()', 1, 17, ['()', 'i32']),
    ('def f (x: i32): i32 = x*-1', 1, 24, ['Unknown operator "*-"', 'write "* -"']),
    ('def f (x: f32) = 0..<x', 1, 22, ['end of a range', 'integer', 'f32']),
    ('def f (x: i32) = #[param(p)] x', 1, 18, ['#[param(p)]', 'i64', 'i32']),
    ('def f (x: i64) = #[param(p)] (x, x)', 1, 18, ['#[param(p)]', 'i64', '(i64, i64)']),
    ('def f (a: i32) (b: i64) = a..<b', 1, 31, ['one type', 'i32', 'i64']),
    ('def f (a: i32) (b: i32) = a..1.5...b', 1, 30, ['second of a range', 'integer']),
    ('def f (n: i64): [n]i64 = 1..<n', 1, 27, ['[n]i64', '[?]i64']),
    ('def f (x: i32): i32 = assert x x', 1, 30, ['condition of an assertion', 'bool', 'i32']),
    ('def f (x: i32): i32 = assert (x > 0)', 1, 37, ['Syntax error', 'end of file']),
    ('def f (xs: []i32): i32 = assert (xs[0] > 0) xs', 1, 26, ['return i32', '[]i32']),
    # records
    ('def f (p: {x: f32, y: f32}) = p.z', 1, 33, ['record of type {x: f32, y: f32}', 'no field "z"']),
    ('def f (p: {x: f32}) = (p).y', 1, 27, ['record of type {x: f32}', 'no field "y"']),
    ('def f (x: {a: i32}) = let r = {b = x} in r.b.c', 1, 46, ['record of type {a: i32}', 'no field "c"']),
    ('def f (x: i32) = x.a', 1, 20, ['field a', 'type i32', 'only records and tuples']),
    ('def f (xs: []i32) = xs[0].a', 1, 27, ['field a', 'type i32', 'only records and tuples']),
    ('def f (xs: []{a: i32}) = xs.a', 1, 29, ['field a', '[]{a: i32}', 'only records and tuples']),
    ('def f (xs: []i32) = map (.x) xs', 1, 25, ['field x', 'type i32', 'only records and tuples']),
    ('def f (x: i32) = {a = x, a = 2}', 1, 26, ['field "a" appears twice', 'this record', 'column 19']),
    ('type t = {a: i32, b: f32, a: f32}', 1, 27, ['field "a" appears twice', 'record type']),
    ('def f (x: i32) = let {a, a = b} = {a = x} in b', 1, 26, ['field "a" appears twice', 'record pattern']),
    ('def f (x: i32) = let {x} = {x = 1, y = 2} in x', 1, 22, ['record pattern', '{x}', 'missing: y']),
    ('def f (x: i32) = let {x, z} = {x = 1, y = 2} in x', 1, 26, ['field "z"', 'no such field']),
    ('def f (x: i32) = let {x} = x in x', 1, 22, ['record pattern', 'type i32']),
    ('def f (x: i32) = let (a, b) = {x = 1, y = 2} in a', 1, 22, ['tuple pattern', '{x: integer literal, y']),
    ('def f (x: i32) = let g = \\{a, b} -> a + b in g {a = x}', 1, 31, ['field "b"', 'parameter', '{a: i32}']),
    ('def f (x: i32) = loop {a, b} = {a = x} for i < 3 do {a, b}', 1, 27, ['field "b"', "loop's initial value"]),
    ('def f (x: i32) = let {x: f32} = {x = 1i32} in x', 1, 23, ['annotated as f32', 'i32']),
    ('def f (x: i32) = let r = {a = x} in r with z = 1', 1, 44, ['{a: i32}', 'no field "z" to update']),
    ('def f (x: i32) = let r = {a = {b = x}} in r with a.q = 1', 1, 52, ['{b: i32}', 'no field "q" to update']),
    ('def f (x: i32) = let r = {a = x} in let r.b = 2 in r', 1, 43, ['{a: i32}', 'no field "b" to update']),
    ('def f (x: i32) = let r = (x, x) in r with 2 = 1', 1, 43, ['tuple of type (i32, i32)', 'no field 2']),
    ('def f (x: i32) = let r = {a = x} in r with a = 1.5', 1, 48, ['field a', 'decimal literal', 'type i32']),
    ('def f (x: i32) = x with a = 1', 1, 25, ['"with"', 'type i32', 'only records and tuples']),
    ('def f (x: i32) = {a = x} == {b = x}', 1, 26, ['"=="', 'different types', '{a: i32} and {b: i32}']),
    ('def f (x: i32) = {a = x} + {a = x}', 1, 26, ['"+"', 'records', '{a: i32}']),
    ('def g (p: {x: f32}): f32 = p.x\ndef f (x: i32) = g {y = 1f32}', 2, 20,
     ['Argument 1 of "g"', '{y: f32}', '{x: f32}']),
    ('def f (x: i32): {a: i32} = {b = x}', 1, 28, ['declared to return {a: i32}', '{b: i32}']),
    ('def f (b: bool) = if b then {a = 1} else {b = 1}', 1, 19, ['branches', 'different types']),
    ('def f [n] (xs: [n]i32) = unzip (map (\\x -> {a = x, b = x}) xs)', 1, 33, ['"unzip"', '2-tuples']),
    ('def f (x: i32) = {zz}', 1, 19, ['Unknown name "zz"']),
    ('def f (x: i32) = {1_0 = x}', 1, 19, ['"1_0" is not a field name']),
    ('def f (x: i32) = {}', 1, 18, ['empty record', 'not supported']),
    ('def f (x: {}) = 1', 1, 11, ['empty record type', 'not supported']),
    ('entry f {x, y: f32} = y', 1, 10, ['"f"', 'cannot be inferred']),
    ('def f [n] (xs: [n]i32) = xs :> [k]i32', 1, 32, ['Unknown size "k"']),
    ('def k (x: i32) = x\ndef f [n] (xs: [n]i32) = xs :> [k]i32', 2, 32, ['"k"', 'names a function']),
    ('def f [n] (xs: [n]i32) = let k = 1f32 in xs :> [k]i32', 1, 48, ['"k"', 'i64', 'f32']),
    ('def f (xs: []i32): *[]i32 = xs', 1, 21, ['unique return value may not alias a non-unique parameter', '"xs"']),
    ('def f (xss: [][]i32): (i32, *[]i32) =\n  let ys = xss[0] in (1, ys)', 1, 30, ['"xss"', 'copy xss']),
    ('def f (xs: []i32): {a: *[]i32} = {a = if true then xs else copy xs}', 1, 25, ['"xs"', 'not unique']),
    # a local function's `[]` takes its size from the uses: sum3 makes it [3], so a use with [4] is refused
    ('def sum3 (x: [3]f32): f32 = x[0]\nentry main (xs: [4]f32) =\n  let g (x: []f32): f32 = sum3 x\n  in g xs', 3, 32,
     ['Argument 1 of "sum3"', '[4]f32', '[3]f32 is expected']),
]


@pytest.mark.parametrize("src, line, col, words", BAD)
def test_errors(src, line, col, words):
    with pytest.raises(CompileError) as info:
        source_program(src, "bad.fut")
    err = info.value
    assert err.loc is not None and err.loc.file == "bad.fut"
    assert (err.loc.line, err.loc.col) == (line, col), format_error(err, src)
    for w in words:
        assert w in err.message, (w, err.message)
    # the rendering shows the source line and a caret under the column
    text = format_error(err, src).splitlines()
    assert text[0].startswith(f"bad.fut:{line}:{col}: error: ")
    assert text[1] == src.splitlines()[line - 1] and text[2].index("^") == col - 1


def test_the_table_is_large():
    assert len(BAD) >= 40


@pytest.mark.parametrize("src", [
    "def f [n] (xs: [n]f32): f32 = 1",
    "def f (x: i32) = let (a, b) = (x, x) in a + b",
    "def f (xs: *[]i32) = let ys = xs with [0] = 1 in ys",
    "def f (xs: []i32) = let ys = copy xs let ys[0] = 2 in ys",
    "def f (n: i64) = loop acc = replicate n 0i32 for i < n do acc with [i] = 1",
    "def f (x: i32) = let {0 = a, 1 = b} = (x, 2) in {1 = a, 0 = b} == (2, x)",
    "def f (xs: {a: *[]i32, n: i64}) = let xs.a = xs.a with [xs.n - 1] = 0 in xs",
    "def f (x: {a: i32}) = let {a = (b: i32)} = x let c = x.a in {b, c} with b = 3",
    "def f (x: i32): i32 = assert (x > 0) x + 1",
    "def f (n: i64): [n]i64 = 0..<n",
    "def f (n: i64): i64 = #[param(block)] #[unsafe] (n * 2) + 1",
    "def f (n: i64): i64 = #[param(a, b)] #[param] n",
    "def f (xs: *[]i32) (ys: []i32) = let xs[1:3] = ys in xs",
    "def f (xss: *[][]i32) (c: []i32) = xss with [:, 1] = c",
    "def f (n: i64): ([n]i64, [n]i64) = (0..1..<n, 1..2...n)",
    "def f (n: i64): [n]i64 = map (+1) (0..<n)",
    "def f (xs: *[]i32): []i32 = assert (length xs > 0) (xs with [0] = 1)",
    "def f (xs: []i32): (*[]i32, []i32) = (copy xs, xs)",
    "def f (xs: *[]i32) (ys: []i32): (*[]i32, i32) = (xs, ys[0])",
    "def g (xs: []i32): *[]i32 = map (+1) xs\ndef f (xs: []i32): *[]i32 = g xs",
])
def test_near_misses_are_accepted(src):
    source_program(src, "ok.fut")


def test_format_error():
    src = "def f (x: i32): i32 =\n\tfoo x\n"
    with pytest.raises(CompileError) as info:
        source_program(src, "a.fut")
    text = format_error(info.value, src)
    assert text.splitlines() == ['a.fut:2:2: error: Unknown name "foo".', "\tfoo x", "\t^"]
    assert str(info.value) == 'a.fut:2:2: error: Unknown name "foo".'
    assert format_error(CompileError("No such file.")) == "error: No such file."
    assert format_error(CompileError("x", Loc("a.fut", 9, 1)), src) == "a.fut:9:1: error: x"


def test_lark_errors_never_escape():
    for src in ["def", "def f =", "entry (", "def f (x: i32): i32 = )", "def f: i32 = 1 +", "\\", "def f = [",
                "def f: i32 = (+", "def f: i32 = (1 +", "def f: i32 = ((", "def 3", "def f [3] = 1",
                "def f = loop", "def f = a[", "def f = a[1:", "def f = (1,", "type", "type t =", "#[", "def f = x.",
                "def f = let (a, b", "def f = \\(x", "def f (x: [", "def f = a with", "def f = #[x] #[y",
                "def f = 'xy", "def f = assert", "def f = assert x", "def f = \"s", "def f = x.0.", "def f (x: (i32,) = 1",
                "def f = {", "def f = {a =", "def f = r with a.", "def f (x: {a:", "def f = let {a", "def f = let r.a",
                "def f = (.a", "def f = {a = 1,,}"]:
        with pytest.raises(CompileError) as info:
            source_program(src, "x.fut")
        assert info.value.loc is not None, src



NOT_UTF8 = [  # (bytes, line, column of the first bad byte)
    (b"-- caf\xe9\ndef main (x: i32) = x + 1\n", 1, 7),
    (b"def main (x: i32) = x + 1 -- \xc3\xa9 is fine\ndef g (x: i32) = x \xff 1\n", 2, 20),
]


@pytest.mark.parametrize("data, line, col", NOT_UTF8)
def test_a_file_that_is_not_utf8_is_a_located_error(tmp_path, data, line, col):
    from incflat.harness import load_program
    from incflat.ir.errors import read_source
    path = tmp_path / "bad.fut"
    path.write_bytes(data)
    with pytest.raises(CompileError) as info:
        read_source(path)
    assert (info.value.loc.file, info.value.loc.line, info.value.loc.col) == (str(path), line, col)
    assert "not UTF-8" in info.value.message
    assert load_program(path).error.loc == info.value.loc  # `incflat test` reports it as a failed file
    proc = subprocess.run([sys.executable, "-m", "incflat", "check", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"{path}:{line}:{col}: error: The file is not UTF-8 text"), proc.stderr
    # `incflat bench` reads the test blocks before compiling: the same place, one line
    proc = subprocess.run([sys.executable, "-m", "incflat", "bench", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and proc.stderr == f"incflat: error: {path}:{line}:{col}: {info.value.message}\n"
