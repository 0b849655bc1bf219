-- k-means-like: each point's nearest centre (a reduction with a tuple operator over the centres), then the
-- number of points per centre and the new centres.
-- ==
-- input { [[0.0f32, 0.0f32], [1.0f32, 0.0f32], [0.0f32, 1.0f32], [10.0f32, 10.0f32], [11.0f32, 10.0f32],
--   [5.0f32, 4.5f32], [-3.0f32, 0.5f32]] [[0.0f32, 0.0f32], [10.0f32, 10.0f32], [100.0f32, 100.0f32]] }
-- output { [0i64, 0i64, 0i64, 1i64, 1i64, 0i64, 0i64] [5i32, 2i32, 0i32] [[0.6f32, 1.2f32], [10.5f32,
--   10.0f32], [0.0f32, 0.0f32]] }
-- random input { [300][4]f32 [5][4]f32 }
-- auto output

def dist2 [d] (p: [d]f32) (c: [d]f32): f32 = reduce (+) 0 (map2 (\x y -> (x - y) * (x - y)) p c)

def nearest [k][d] (cs: [k][d]f32) (p: [d]f32): i64 =
  let (_, best) = reduce (\(d1, i1) (d2, i2) -> if d1 < d2 || (d1 == d2 && i1 < i2) then (d1, i1) else (d2, i2))
                         (f32.inf, k) (map2 (\c i -> (dist2 p c, i)) cs (iota k))
  in best

entry main [n][k][d] (points: [n][d]f32) (centres: [k][d]f32): ([n]i64, [k]i32, [k][d]f32) =
  let membership = map (nearest centres) points
  let counts = map (\c -> reduce (+) 0 (map (\m -> if m == c then 1 else 0) membership)) (iota k)
  let sums = map (\c -> map (\j -> reduce (+) 0 (map2 (\m p -> if m == c then p[j] else 0) membership points))
                           (iota d))
                 (iota k)
  let new_centres = map2 (\s cnt -> map (\x -> x / f32.max 1 (f32.i32 cnt)) s) sums counts
  in (membership, counts, new_centres)
