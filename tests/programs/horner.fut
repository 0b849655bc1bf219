-- Polynomial evaluation by Horner's rule: a for-in loop over the coefficients inside a map.
-- ==
-- input { [0.0f32, 1.0f32, 2.0f32, -1.5f32] [1.0f32, -2.0f32, 0.5f32] }
-- output { [1.0f32, -0.5f32, -1.0f32, 5.125f32] }
-- input { [0.0f32, 1.0f32, 2.0f32, -1.5f32] empty([0]f32) }
-- output { [0.0f32, 0.0f32, 0.0f32, 0.0f32] }

entry main [n][k] (xs: [n]f32) (cs: [k]f32): [n]f32 =
  map (\x -> loop acc = 0 for c in cs[::-1] do acc * x + c) xs
