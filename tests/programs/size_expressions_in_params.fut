-- Size expressions in parameter types ([n*m], [n+n]): checked at run time against the argument.
-- ==
-- input { 2i64 3i64 [1,2,3,4,5,6] }
-- output { [[1,2,3],[4,5,6]] [5,7,9] [4,7] }
-- input { 2i64 2i64 [1,2,3,4,5,6] }
-- error: .
def split_rows (n: i64) (m: i64) (xs: [n*m]i32): [n][m]i32 = unflatten xs
def add_halves [n] (a: [n]i32) (xs: [n+n]i32): [n]i32 = map3 (\x y z -> x + y + z) a xs[:n] (xs[n:] :> [n]i32)
entry main (n: i64) (m: i64) (xs: []i32) =
  let r = split_rows n m xs
  in (r, map i32.sum (transpose r), add_halves (iota 2 |> map i32.i64) (take 4 xs))
