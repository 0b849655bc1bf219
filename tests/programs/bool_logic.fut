-- Boolean operators, negation and comparisons.
-- ==
-- entry: main
-- input { [true, true, false, false, true] [true, false, true, false, false] }
-- output { [true, false, false, false, false] [true, true, true, false, true] [false, false, true, true,
--   false] [false, true, true, false, true] [true, false, false, true, false] }

-- ==
-- entry: compare
-- input { 1i32 2i32 }
-- output { true true false false false true }
-- input { 2i32 2i32 }
-- output { false true false true true false }
-- input { 3i32 -2i32 }
-- output { false false true true false true }

-- ==
-- entry: combined
-- input { 1.0f32 2.0f32 }
-- output { true }
-- input { 0.0f32 2.0f32 }
-- output { false }
-- input { 0.0f32 11.0f32 }
-- output { true }
-- input { 5.0f32 1.0f32 }
-- output { false }

entry main [n] (xs: [n]bool) (ys: [n]bool): ([n]bool, [n]bool, [n]bool, [n]bool, [n]bool) =
  (map2 (&&) xs ys, map2 (||) xs ys, map (\x -> !x) xs, map2 (!=) xs ys, map2 (==) xs ys)

entry compare (a: i32) (b: i32): (bool, bool, bool, bool, bool, bool) =
  (a < b, a <= b, a > b, a >= b, a == b, a != b)

entry combined (a: f32) (b: f32): bool =
  a < b && !(a == 0) || b > 10
