-- Heston-like nest (PPoPP'19 §5): a map holding a redomap holding a reduce. For each parameter set, the
-- sum over quadrature points of a weight times an inner sum over the data.
-- ==
-- input { [0.5f32, 1.0f32, 2.0f32] [0.1f32, 0.2f32] [1.0f32, 2.0f32, 3.0f32, 4.0f32] }
-- output { [3.1f32, 3.2f32, 3.4f32] }
-- random input { [7]f32 [33]f32 [50]f32 } auto output
-- random input { [1]f32 [300]f32 [2]f32 } auto output

entry main [n][q][d] (params: [n]f32) (points: [q]f32) (data: [d]f32): [n]f32 =
  map (\a -> reduce (+) 0 (map (\w -> w * reduce (+) 0 (map (\x -> a * w + x) data)) points)) params
