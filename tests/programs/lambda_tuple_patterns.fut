-- Lambdas with tuple patterns over zipped arrays, and maps returning tuples split by unzip.
-- ==
-- input { [1i32, 2i32, 3i32, -4i32] [10i32, -20i32, 30i32, 5i32] }
-- output { [11i32, -18i32, 33i32, 1i32] [1i32, -18i32, 63i32, -29i32] }

entry main [n] (xs: [n]i32) (ys: [n]i32): ([n]i32, [n]i32) =
  let ps = zip xs ys
  let sums = map (\(a, b) -> a + b) ps
  let (qs, rs) = unzip (map (\(a, b) -> (a * b, a - b)) ps)
  in (sums, map2 (\q r -> q + r) qs rs)
