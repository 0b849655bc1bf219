-- f32.sgn and f64.sgn as Futhark's fsignum: NaN stays NaN, and either zero gives +0 (1 / sgn is +inf), in
-- kernels (the maps) and on the host (the scalars) alike.
-- ==
-- entry: main
-- input { [f32.nan, 1f32, -2f32, 0f32, -0f32, f32.inf, -f32.inf] [f64.nan, 1f64, -2f64, 0f64, -0f64, f64.inf, -f64.inf] }
-- output { [f32.nan, 1f32, -1f32, 0f32, 0f32, 1f32, -1f32] [f64.nan, 1f64, -1f64, 0f64, 0f64, 1f64, -1f64] f32.nan f64.nan }

entry main (xs: []f32) (ys: []f64) = (map f32.sgn xs, map f64.sgn ys, f32.sgn xs[0], f64.sgn ys[0])

-- ==
-- entry: zero_signs
-- input { [0f32, -0f32] [0f64, -0f64] }
-- output { [f32.inf, f32.inf] [f64.inf, f64.inf] f32.inf f64.inf }

entry zero_signs (xs: []f32) (ys: []f64) =
  (map (\x -> 1 / f32.sgn x) xs, map (\y -> 1 / f64.sgn y) ys, 1 / f32.sgn xs[1], 1 / f64.sgn ys[1])
