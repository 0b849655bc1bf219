-- A lambda's body extends as far right as possible, ascriptions and coercions included (as in Futhark):
-- `\xs -> xs :> [k]i32` coerces the body, with a size k from outside the lambda, inside a kernel.
-- ==
-- input { 2i64 [[1,2],[3,4],[5,6]] [7,8,9] }
-- output { [[1,2],[3,4],[5,6]] [8,9,10] 21 }
-- input { 3i64 [[1,2],[3,4]] [7] }
-- error: .
entry main [n][m] (k: i64) (xss: [n][m]i32) (ys: []i32) =
  let a = map (\xs -> xs :> [k]i32) xss
  let b = map (\x -> x + 1 : i32) ys
  let c = i32.sum (map (\(xs: [k]i32) -> i32.sum xs : i32) a)
  in (a, b, c)
