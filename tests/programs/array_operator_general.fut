-- A reduction operator on arrays that is not elementwise: the interpreter runs it, code generation names it.
-- ==
-- input { [[1,2],[3,4],[0,1]] }
-- output { [3, 4] }
entry main [m] (xss: [][m]i32) =
  reduce (\a b -> if i32.sum a >= i32.sum b then a else b) (replicate m i32.lowest) xss
