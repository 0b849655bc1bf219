-- filter: keeps the elements for which the predicate holds (possibly none).
-- ==
-- input { [3i32, -1i32, 0i32, 8i32, -7i32, 6i32, 2i32] }
-- output { [3i32, 8i32, 6i32, 2i32] 4i64 [0i32, 8i32, 6i32, 2i32] }
-- input { [-1i32, -3i32] }
-- output { empty([0]i32) 0i64 empty([0]i32) }

entry main [n] (xs: [n]i32): ([]i32, i64, []i32) =
  let pos = filter (> 0) xs
  in (pos, length pos, filter (\x -> x % 2 == 0) xs)
