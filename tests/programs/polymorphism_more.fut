-- Polymorphism as Futhark's libraries write it: a type parameter bound to tuples through an array's element type
-- (the segmented library's `expand`, whose result is `*[]b` with b a tuple), local functions with type and size
-- parameters (accelerate's smoothlife), top-level `let` (the older complex library), an infix `-` defined on
-- bracketed patterns, and a composition whose second function returns a function (accelerate's fft: `f >-> tabmap`
-- passed where two arguments are given).
-- ==
-- entry: expanded
-- input { [1, 2] }
-- output { [1, 3, 1] [1, 2, 1] [1, 3, 1] [1.0f32, 1.0f32, 1.0f32] }

-- ==
-- entry: local_poly
-- input { [1, 2, 3, 4] [[1f32, 2f32, 3f32], [4f32, 5f32, 6f32]] }
-- output { [2, 3, 4, 1] [[2f32, 3f32, 1f32], [5f32, 6f32, 4f32]] 5 }

-- ==
-- entry: tabmapped
-- input { [[0f32, 0f32], [0.5f32, 0f32]] }
-- output { [[0f32, 1f32], [10.5f32, 11f32]] }

-- ==
-- entry: complex_minus
-- input { 5 }
-- output { 5 2 }

def expand 'a 'b (sz: a -> i64) (get: a -> i64 -> b) (arr: []a) : *[]b =
  let szs = map sz arr
  let idxs = map (\i -> i % length arr) (iota (i64.sum szs))
  in map2 (\i j -> get arr[i] j) idxs idxs

entry expanded (xs: []i32) =
  let f (x: i32) = i64.i32 x
  let g (z, c) (i: i64) = (z, c + i32.i64 i, 1f32)
  let h (x: i32) (i: i64) = x + i32.i64 i
  in (expand f h xs, expand (\(z, _) -> i64.i32 z) g (zip xs xs))

entry local_poly (xs: [4]i32) (ys: [2][3]f32) : ([4]i32, [2][3]f32, i32) =
  let shift 'a [n] (arr: [n]a) : [n]a = rotate 1 arr
  let pick 't (x: t) (y: t) (b: bool) : t = if b then x else y
  in (shift xs, map shift ys, pick 1 2 true + pick 3 4 false)

def tabmap [n] 'a 'b (f: i32 -> a -> b) (xs: [n]a) =
  map2 f (map i32.i64 (iota n)) xs

entry tabmapped [n] [m] (arr: [n][m]f32) : [n][m]f32 =
  let f (i: i32) (j: i32) (x: f32) = f32.i32 (i * 10 + j) + x
  in tabmap (f >-> tabmap) arr

-- Size parameters decided by size expressions (pbbs' rangeQuery2d: `[2 * k]` given `take (2 * (n / 3)) p`), and by
-- a later parameter (adbench's lstm: `[4 * d]` before `[3][d]`).
-- ==
-- entry: sized_by_expressions
-- input { [1, 2, 3, 4, 5, 6, 7] [[1f32, 2f32], [3f32, 4f32], [5f32, 6f32]] }
-- output { [3, 7] 21f32 }

def build [k] (ps: [2 * k]i32) : [k]i32 = map (\i -> ps[2 * i] + ps[2 * i + 1]) (iota k)
def total [d] (flat: [3 * d]f32) (rows: [3][d]f32) : f32 = f32.sum flat + 0 * f32.sum (flatten rows)

entry sized_by_expressions [n] (p: [n]i32) (rows: [3][2]f32) : ([]i32, f32) =
  (build (take (2 * (n / 3)) p), total (flatten rows) rows)

-- A lambda whose body is a partial application (rodinia's particlefilter: `map2 (\x -> map2 f (iota d)) (iota d)`).
-- ==
-- entry: neighbours
-- input { [[1, 0], [0, 1]] }
-- output { [0i64, 1i64] [0i64, 1i64] }

entry neighbours [d] (se: [d][d]i32) : [](i64, i64) =
  se |> map2 (\x -> map2 (\y v -> (v != 0, (y, x))) (iota d)) (iota d)
     |> flatten |> filter (.0) |> map (.1)

-- An i64 parameter whose name has an apostrophe, as a size of the result (knn-by-kdtree's `m'`), and an
-- application whose last argument is an unbracketed lambda (`tabulate n \\i -> ...`).
-- ==
-- entry: primed
-- input { 3i64 4 }
-- output { [4, 5, 6] }

entry primed (m': i64) (x': i32) : *[m']i32 =
  let indir = tabulate m' \i -> x' + i32.i64 i
  in loop (indir: *[m']i32) for lev < 2 do sized m' (flatten (unflatten (sized (1 * m') indir)))

-- A type applied to a type and then a size (poseidon's `matrix t [width]`).
-- ==
-- entry: corner
-- input { [[1, 2], [3, 4]] }
-- output { 4 }

type matrix 't [w] = [w][w]t

entry corner (m: matrix i32 [2]) : i32 = m[1][1]

-- (the rest of the file sees this + on pairs)
type c = (i32, i32)
let ((a, b): c) - ((x, y): c) : c = (a - x, b - y)
def (p: c) + (q: c) : c = (p.0 + q.0, p.1 + q.1)

entry complex_minus (x: i32) : (i32, i32) = ((x, 2) - (1, 1)) + (1, 1)
