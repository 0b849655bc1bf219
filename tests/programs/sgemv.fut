-- Matrix-vector product with scaling: y' = alpha A x + beta y.
-- ==
-- input { [[-0.11f32, 0.44f32, 0.5f32, -0.43f32, -0.19f32], [-0.19f32, 0.67f32, -0.55f32, -0.6f32, 0.64f32],
--   [-0.98f32, -0.11f32, 0.47f32, 0.3f32, 0.06f32]] [-0.02f32, 0.36f32, -0.38f32, 0.11f32, 0.91f32] [0.64f32,
--   -0.94f32, 0.1f32] 2.0f32 -0.5f32 }
-- output { [-0.8192f32, 2.4108f32, -0.27199998f32] }
-- random input { [64][1000]f32 [1000]f32 [64]f32 1.5f32 0.5f32 }
-- auto output

entry main [n][m] (a: [n][m]f32) (x: [m]f32) (y: [n]f32) (alpha: f32) (beta: f32): [n]f32 =
  map2 (\row yi -> alpha * reduce (+) 0 (map2 (*) row x) + beta * yi) a y
