-- Reversed slices inside kernels, and a map over a reversed array (negative strides in kernels).
-- ==
-- input { [[1,2,3],[4,5,6],[7,8,9],[10,11,12]] }
-- output { [[12,11,10],[9,8,7],[6,5,4],[3,2,1]] [6, 15, 24, 33] [[3,2],[6,5],[9,8],[12,11]] [[11,12,13],[8,9,10],[5,6,7],[2,3,4]] [[10,7,4,1],[11,8,5,2],[12,9,6,3]] [3, 6, 9, 12] }
entry main [n][m] (xss: [n][m]i32) =
  ( map (\r -> r[::-1]) xss[::-1]
  , map (\r -> i32.sum r[::-1]) xss
  , map (\r -> r[::-1][:2]) xss
  , map (\r -> map (+1) r) xss[::-1]
  , transpose xss[::-1]
  , map (\r -> reduce (+) 0 r[m-1:0:-2]) xss
  )
