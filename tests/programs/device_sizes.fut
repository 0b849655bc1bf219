-- Sizes computed by kernels (left on the device) used by replicate, iota, map, slices, loops and if.
-- ==
-- input { [1i64,2i64,3i64] }
-- output { [7i64,7i64,7i64,7i64,7i64,7i64] [0i64,1i64,2i64,3i64,4i64,5i64] [2i64,3i64,4i64,5i64,6i64,7i64] [1i64,2i64,3i64,1i64,2i64,3i64] 15i64 [[1i64,1i64,1i64],[1i64,1i64,1i64],[1i64,1i64,1i64],[1i64,1i64,1i64],[1i64,1i64,1i64],[1i64,1i64,1i64]] [3i64,2i64,1i64] }
entry main (xs: []i64) =
  let s = i64.sum xs
  let k = i64.maximum xs
  let m = reduce (*) 1 xs
  in ( replicate s 7i64
     , iota m
     , map (+2) (iota s)
     , (xs ++ xs)[:s]
     , loop acc = 0 for i < s do acc + i
     , replicate s (replicate k 1i64)
     , if s > 5 then reverse xs else xs
     )
