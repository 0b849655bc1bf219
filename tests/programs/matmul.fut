-- Matrix multiplication: a map of a map of a reduction over a transposed matrix (five code versions).
-- ==
-- input { [[-0.71f32, -0.12f32, -0.32f32, 0.94f32], [-0.6f32, -0.14f32, -0.09f32, 0.3f32], [0.37f32, 0.06f32,
--   0.76f32, 0.53f32]] [[-0.23f32, 0.4f32], [0.11f32, 0.86f32], [0.7f32, 0.93f32], [-0.28f32, 0.08f32]] }
-- output { [[-0.3371f32, -0.6096f32], [-0.024399998f32, -0.42010003f32], [0.3051f32, 0.94879997f32]] }
-- input { [[1.0f32, 0.0f32], [0.0f32, 1.0f32]] [[1.0f32, 2.0f32], [3.0f32, 4.0f32]] }
-- output { [[1.0f32, 2.0f32], [3.0f32, 4.0f32]] }
-- random input { [20][30]f32 [30][10]f32 }
-- auto output
-- random input { [1][500]f32 [500][1]f32 }
-- auto output
-- random input { [200][3]f32 [3][2]f32 }
-- auto output

entry main [n][m][p] (xss: [n][m]f32) (yss: [m][p]f32): [n][p]f32 =
  map (\xs -> map (\ys -> reduce (+) 0 (map2 (*) xs ys)) (transpose yss)) xss
