-- An index of an integer type not known yet keeps it open, as in Futhark: `m` defaults to i32 here (the loop
-- bound's type), and the index converts to i64; a literal index is an i64. The kernel's map indexes the same way.
-- ==
-- entry: main
-- input { 3 [1, 2, 3] } output { 3 }
-- input { 0 [7] } output { 0 }

entry main m xs = loop y = 0 for i < m do xs[i]

-- ==
-- entry: in_kernel
-- input { [2, 0, 1] [10, 20, 30] } output { [30, 10, 20] 20 3i64 }

entry in_kernel is (xs: []i32) = (map (\i -> xs[i]) is, xs[1], length is)
