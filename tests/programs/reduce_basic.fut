-- reduce with +, *, && and || on i64, f64 and bool; empty arrays give the neutral element.
-- ==
-- entry: main
-- input { [3i64, -1i64, 4i64, 1i64, 5i64, 9i64, -2i64, 6i64] }
-- output { 25i64 211680i64 false false }
-- input { [1i64, 2i64, 300i64] }
-- output { 303i64 42i64 true true }
-- input { empty([0]i64) }
-- output { 0i64 1i64 true false }

-- ==
-- entry: floats
-- input { [0.5f64, 0.25f64, 2.0f64, -1.0f64] }
-- output { 1.75f64 }
-- random input { [10000]f64 }
-- auto output

entry main [n] (xs: [n]i64): (i64, i64, bool, bool) =
  (reduce (+) 0 xs, reduce (*) 1 (map (\x -> x % 7 + 1) xs),
   reduce (&&) true (map (> 0) xs), reduce (||) false (map (> 100) xs))

entry floats [n] (xs: [n]f64): f64 = reduce (+) 0 xs
