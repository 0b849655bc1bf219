-- The #[unsafe] attribute on an indexing expression (no bounds check; the indices given are in bounds).
-- ==
-- input { [0.5f32, 1.5f32, 2.5f32] [2i64, 2i64, 0i64, 1i64] }
-- output { [2.5f32, 2.5f32, 0.5f32, 1.5f32] }

entry main [n][k] (xs: [n]f32) (is: [k]i64): [k]f32 = map (\i -> #[unsafe] xs[i]) is
