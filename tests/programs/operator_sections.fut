-- Operator sections: (+1), (2*), (10-), (/2), (%5) and a bare operator (*).
-- ==
-- input { [1i32, 7i32, -3i32, 10i32, 4i32] }
-- output { [2i32, 8i32, -2i32, 11i32, 5i32] [2i32, 14i32, -6i32, 20i32, 8i32] [9i32, 3i32, 13i32, 0i32, 6i32]
--   [0i32, 3i32, -2i32, 5i32, 2i32] 90i32 }

entry main [n] (xs: [n]i32): ([n]i32, [n]i32, [n]i32, [n]i32, i32) =
  (map (+1) xs, map (2*) xs, map (10-) xs, map (/2) xs, reduce (*) 1 (map (+1) (map (%5) xs)))
