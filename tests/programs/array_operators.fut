-- reduce and scan with elementwise operators on arrays: map2 (+), map2 (map2 (+)), a neutral array that
-- is not a replicate (rule G4 for reductions and scans).
-- ==
-- input { [[[1,2],[3,4]],[[5,6],[7,8]],[[9,10],[11,12]]] [[1,2],[3,4],[5,6]] }
-- output { [[15,18],[21,24]] [[[1,2],[3,4]],[[6,8],[10,12]],[[15,18],[21,24]]] [[1,2],[4,6],[9,12]] [1, 2] }
entry main [k][m] (xsss: [][k][m]i32) (xss: [][m]i32) =
  ( reduce (map2 (map2 (+))) (replicate k (replicate m 0)) xsss
  , scan (\a b -> map2 (map2 (+)) a b) (replicate k (replicate m 0)) xsss
  , scan (map2 (+)) (map (\_ -> 0i32) (iota m)) xss
  , reduce (map2 i32.min) (replicate m i32.highest) xss
  )
