-- Per-row map-reduce compositions that normalisation fuses (redomap): dot products, norms and counts.
-- ==
-- input { [[0.61f32, 0.62f32, 0.03f32, -0.43f32, -0.89f32, -0.23f32], [-0.18f32, -0.91f32, -0.9f32, 1.0f32,
--   0.3f32, -0.53f32], [-0.13f32, 0.95f32, 0.8f32, 0.69f32, -0.22f32, -0.01f32], [0.35f32, -0.88f32, 0.11f32,
--   -0.46f32, 0.76f32, -0.87f32]] [0.36f32, 0.74f32, -0.55f32, 0.79f32, 0.74f32, -0.96f32] }
-- output { [-0.11559999f32, 1.2775999f32, 0.6081f32, 0.44849998f32] [1.3368994f32, 1.743961f32, 1.4436066f32,
--   1.5668758f32] [3i32, 2i32, 3i32, 3i32] }
-- random input { [16][2000]f32 [2000]f32 }
-- auto output
-- random input { [3000][4]f32 [4]f32 }
-- auto output

entry main [n][m] (xss: [n][m]f32) (ys: [m]f32): ([n]f32, [n]f32, [n]i32) =
  (map (\xs -> reduce (+) 0 (map2 (*) xs ys)) xss,
   map (\xs -> f32.sqrt (reduce (+) 0 (map (\x -> x * x) xs))) xss,
   map (\xs -> reduce (+) 0 (map (\x -> if x > 0 then 1 else 0) xs)) xss)
