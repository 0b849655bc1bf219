-- `rep x`: `replicate n x` of the size n its use decides: the other arrays of a map, zip, scatter or hist, the
-- type annotated or returned, the other branch of `if` (Futhark's prelude; github.com/diku-dk/containers uses it).
-- ==
-- input { [1, 2, 3] [0i64, 2i64, 2i64] false }
-- output { [7, 2, 7] [2, 3, 4] [5i64, 5i64] [1, 0, 2] [0f32, 0f32, 0f32] }

entry main [n] (xs: [n]i32) (is: [n]i64) (b: bool) =
  let ones = rep 1
  let fives : [2]i64 = rep 5
  in ( scatter (copy xs) [0, 2] (rep 7)
     , map2 (+) xs ones
     , fives
     , hist (+) 0 3 is (rep 1)
     , if b then map f32.i32 xs else rep 0
     )
