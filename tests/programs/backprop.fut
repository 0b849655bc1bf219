-- Backprop-like: column sums of the products of inputs and deltas, and the weight update; column sums of a
-- matrix as a reduction whose operator adds whole rows.
-- ==
-- entry: main
-- input { [0.5f32, -1.0f32, 2.0f32] [0.1f32, 0.2f32, -0.3f32, 0.4f32] [[0.01f32, -0.88f32, -0.81f32,
--   0.16f32], [0.94f32, 0.32f32, 0.18f32, -0.24f32], [0.79f32, -0.24f32, -0.84f32, 0.12f32]] }
-- output { [0.15f32, 0.3f32, -0.45000002f32, 0.6f32] [[0.025f32, -0.85f32, -0.855f32, 0.22f32],
--   [0.90999997f32, 0.26f32, 0.27f32, -0.36f32], [0.85f32, -0.11999999f32, -1.02f32, 0.36f32]] }

-- ==
-- entry: colsums
-- input { [[0.97f32, -0.48f32, 0.79f32, 0.04f32], [-0.96f32, -0.22f32, 0.23f32, -0.13f32], [0.72f32, 0.94f32,
--   -0.76f32, 0.53f32], [-0.92f32, 0.92f32, -0.35f32, 0.93f32], [-0.12f32, 0.26f32, 0.84f32, -0.97f32]] }
-- output { [-0.30999994f32, 1.4200001f32, 0.75f32, 0.39999995f32] }
-- input { empty([0][3]f32) }
-- output { [0.0f32, 0.0f32, 0.0f32] }
-- random input { [100][37]f32 }
-- auto output

entry main [n][m] (inputs: [n]f32) (deltas: [m]f32) (weights: [n][m]f32): ([m]f32, [n][m]f32) =
  let prods = map (\x -> map (\d -> x * d) deltas) inputs
  let colsums = map (\col -> reduce (+) 0 col) (transpose prods)
  let new_w = map2 (\ws x -> map2 (\w d -> w + 0.3 * x * d) ws deltas) weights inputs
  in (colsums, new_w)

entry colsums [n][m] (xss: [n][m]f32): [m]f32 = reduce (map2 (+)) (replicate m 0) xss
