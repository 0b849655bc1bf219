-- Entry points whose parameter types are not written: decided by their uses (scalars, arrays, tuples).
-- ==
-- entry: main
-- input { 41i32 }
-- output { 42i32 }

-- ==
-- entry: sums
-- input { [[1,2],[3,4]] [1.5f32, 2.5f32] }
-- output { [3, 7] 4.0f32 10 }

-- ==
-- entry: pairs
-- input { [1,2,3] [4,5,6] true }
-- output { [5,7,9] 9 }
def main x = x + 1i32
entry sums xss ys = (map i32.sum xss, f32.sum ys, i32.sum (flatten xss))
entry pairs xs ys b =
  let (a, c) = (xs, ys)
  in (map2 (+) a c, if b then xs[2] + ys[2] else 0)
