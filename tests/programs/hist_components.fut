-- Histograms of tuples and of rows, where the operator combines each component on its own: accelerate's kmeans
-- (points as pairs, added), rodinia's kmeans (rows added with map2 (+)), micro/reduce_by_index's sum_vec; indices
-- out of range are ignored; reduce_by_index into bins that hold values already; the operator's arguments in
-- either order (map2 f y x); a component whose operator is not +. And tuples whose operator mixes components,
-- packed into 64 bits (micro/reduce_by_index's argmax, pbbs convexHull's farthest point: ties to the lower index).
-- ==
-- entry: pairs
-- input { 3i64 [0, 2, 2, 7, -1, 1] [1f32, 2f32, 3f32, 4f32, 5f32, 6f32] }
-- output { [1f32, 6f32, 5f32] [1f32, 36f32, 13f32] [1, 6, 3] }

-- ==
-- entry: rows
-- input { 2i64 [1, 0, 1, 5] [[1f32, 2f32, 3f32], [4f32, 5f32, 6f32], [7f32, 8f32, 9f32], [1f32, 1f32, 1f32]] }
-- output { [[4f32, 5f32, 6f32], [8f32, 10f32, 12f32]] [[0, 2], [0, 4]] }

-- ==
-- entry: into
-- input { [[1, 1], [2, 2]] [1, 1, 0] [[1, 2], [3, 4], [5, 6]] }
-- output { [[6, 7], [6, 8]] }

-- ==
-- entry: argmax
-- input { 3i64 [0, 1, 0, 2, 5, -1, 1] [4, 9, 4, -3, 100, 100, 2] }
-- output { [4, 9, -3] [0, 1, 3] }

-- ==
-- entry: farthest
-- input { 3i64 [0i64, 1i64, 0i64, 1i64] [1f32, -2f32, 3f32, -1f32] }
-- output { [2, 3, -1] [3f32, -1f32, -f32.inf] }

def argmax_op ((x: i32), (i: i32)) ((y: i32), (j: i32)) =
  if y > x then (y, j) else if y < x then (x, i) else if i > j then (y, j) else (x, i)

entry argmax [n] (k: i64) (is: [n]i32) (vs: [n]i32) : ([]i32, []i32) =
  hist argmax_op (i32.lowest, -1) k (map i64.i32 is) (zip vs (map i32.i64 (iota n))) |> unzip

entry farthest (k: i64) (is: []i64) (ds: []f32) : ([]i32, []f32) =
  let max (i, d) (j, e) = if e > d then (j, e) else (i, d)
  in unzip (reduce_by_index (replicate k (-1, f32.lowest)) max (-1, f32.lowest) is (zip (map i32.i64 (indices ds)) ds))

def add_points (x1: f32, y1: f32) (x2: f32, y2: f32) = (x1 + x2, y1 + y2)

entry pairs (k: i64) (is: []i32) (xs: []f32) : ([]f32, []f32, []i32) =
  let (s, sq) = unzip (hist add_points (0, 0) k (map i64.i32 is) (map (\x -> (x, x * x)) xs))
  let (_, m) = unzip (hist (\(a, p) (b, q) -> (a + b, i32.max p q)) (0f32, 0) k (map i64.i32 is)
                           (map (\x -> (x, i32.f32 x)) xs))
  in (s, sq, m)

entry rows [n] [d] (k: i64) (is: [n]i32) (points: [n][d]f32) : ([][d]f32, [][2]i32) =
  (hist (map2 (+)) (replicate d 0) k (map i64.i32 is) points,
   hist (\x y -> map2 (\a b -> a + b) y x) (replicate 2 0) k (map i64.i32 is) (map (\_ -> [0, 1i32]) points
                                                                                   |> map (map (* 2))))

entry into [k] [n] (dest: *[k][2]i32) (is: [n]i32) (vs: [n][2]i32) : [k][2]i32 =
  reduce_by_index dest (map2 (+)) (replicate 2 0) (map i64.i32 is) vs
