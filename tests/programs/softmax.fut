-- Softmax of each row: a maximum, a map and a sum per row (inner parallelism in every row).
-- ==
-- input { [[1.0f32, 2.0f32, 3.0f32], [0.0f32, 0.0f32, 0.0f32], [-1.0f32, 5.0f32, 2.0f32]] }
-- output { [[0.09003057f32, 0.24472846f32, 0.66524094f32], [0.33333334f32, 0.33333334f32, 0.33333334f32],
--   [0.002355633f32, 0.95033026f32, 0.047314156f32]] }
-- random input { [8][300]f32 }
-- auto output

entry main [n][m] (xss: [n][m]f32): [n][m]f32 =
  map (\row ->
         let mx = reduce f32.max (-f32.inf) row
         let es = map (\x -> f32.exp (x - mx)) row
         let s = reduce (+) 0 es
         in map (/ s) es)
      xss
