-- A histogram as a map over the bins of a reduction over the data (elements outside the bins are dropped).
-- ==
-- input { [0i64, 3i64, 3i64, 1i64, 7i64, 3i64, 0i64, 2i64, 9i64] 5i64 }
-- output { [2i32, 1i32, 1i32, 3i32, 0i32] }
-- input { empty([0]i64) 3i64 }
-- output { [0i32, 0i32, 0i32] }

entry main [n] (xs: [n]i64) (bins: i64): [bins]i32 =
  map (\b -> reduce (+) 0 (map (\x -> if x == b then 1 else 0) xs)) (iota bins)
