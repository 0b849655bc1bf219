-- The prelude's derived array functions: partition and partition2 (filters, so kernels; stable, the second
-- part of size n-k), split, foldr, tabulate_2d/3d, scatter_2d/3d (out-of-bounds and negative indices are
-- ignored), flatten_4d/unflatten_4d, and flip, curry, uncurry, const, opaque.
-- ==
-- entry: parts
-- input { [5i32, -2i32, 8i32, 0i32, -7i32, 3i32] }
-- output { [5i32, 8i32, 0i32, 3i32] [-2i32, -7i32] [8i32, 0i32] [5i32, -7i32, 3i32] [-2i32] 6i64 }
-- input { empty([0]i32) }
-- output { empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) 0i64 }

entry parts [n] (xs: [n]i32) =
  let (nonneg, neg) = partition (\x -> x >= 0) xs
  let (even, odd, rest) = partition2 (\x -> x % 2 == 0 && x >= 0) (\x -> x % 2 != 0) xs
  in (nonneg, neg, even, odd, rest, length nonneg + length neg)

-- ==
-- entry: pairs
-- input { [1i64, 2i64, 3i64, 4i64] [10i64, 20i64, 30i64, 40i64] }
-- output { [10i64, 40i64, 90i64, 160i64] [9i64, 18i64, 27i64, 36i64] [1i64, 2i64, 3i64, 4i64] 4i32 }

entry pairs [n] (xs: [n]i64) (ys: [n]i64) =
  (map (uncurry (*)) (zip xs ys), map2 (flip (-)) xs ys, map2 const xs ys,
   opaque (curry (\(a, b) -> a + b) 1 3))

-- ==
-- entry: folds
-- input { [1i32, 2i32, 3i32] }
-- output { 321i32 123i32 2i32 }
-- input { empty([0]i32) }
-- output { 0i32 0i32 0i32 }

entry folds [n] (xs: [n]i32) =
  (foldr (\x acc -> acc * 10 + x) 0 xs, foldl (\acc x -> acc * 10 + x) 0 xs, foldr (-) 0 xs)

-- ==
-- entry: splits
-- input { [1f32, 2f32, 3f32, 4f32, 5f32] 2i64 }
-- output { [1f32, 2f32] [3f32, 4f32, 5f32] }
-- input { [1f32, 2f32] 0i64 }
-- output { empty([0]f32) [1f32, 2f32] }

entry splits [n] (xs: [n]f32) (k: i64) =
  split (xs :> [k + (n - k)]f32)

-- ==
-- entry: tabs
-- input { 2i64 3i64 }
-- output { [[0i64, 1i64, 2i64], [10i64, 11i64, 12i64]]
--   [[[0i64, 1i64, 2i64], [10i64, 11i64, 12i64]], [[100i64, 101i64, 102i64], [110i64, 111i64, 112i64]]] }
-- input { 0i64 3i64 }
-- output { empty([0][3]i64) empty([0][2][3]i64) }

entry tabs (n: i64) (m: i64) =
  (tabulate_2d n m (\i j -> 10 * i + j), tabulate_3d n 2 m (\i j k -> 100 * i + 10 * j + k))

-- ==
-- entry: scatters
-- input { [[0i32, 0i32, 0i32], [0i32, 0i32, 0i32]] [0i64, 1i64, -1i64, 2i64, 1i64] [2i64, 0i64, 0i64, 0i64, 3i64]
--   [1i32, 2i32, 3i32, 4i32, 5i32] }
-- output { [[0i32, 0i32, 1i32], [2i32, 0i32, 0i32]] [[[0i32, 7i32], [0i32, 0i32]], [[0i32, 0i32], [0i32, 8i32]]] }
-- input { [[0i32, 0i32, 0i32], [0i32, 0i32, 0i32]] empty([0]i64) empty([0]i64) empty([0]i32) }
-- output { [[0i32, 0i32, 0i32], [0i32, 0i32, 0i32]] [[[0i32, 7i32], [0i32, 0i32]], [[0i32, 0i32], [0i32, 8i32]]] }

entry scatters [n] (dest: *[2][3]i32) (is: [n]i64) (js: [n]i64) (vs: [n]i32) =
  let cube = replicate 2 (replicate 2 (replicate 2 0i32))
  in (scatter_2d dest (zip is js) vs, scatter_3d cube [(0, 0, 1), (1, 1, 1), (2, 0, 0), (0, -1, 0)] [7, 8, 9, 10])

-- ==
-- entry: flat4
-- input { [[[[1i32, 2i32]], [[3i32, 4i32]]]] }
-- output { [1i32, 2i32, 3i32, 4i32] [[[[1i32, 2i32]], [[3i32, 4i32]]]] }

entry flat4 [a][b][c][d] (xs: [a][b][c][d]i32) =
  let f = flatten_4d xs
  in (f, unflatten_4d f)
