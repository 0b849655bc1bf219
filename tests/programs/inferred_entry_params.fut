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

-- ==
-- entry: ranks
-- input { [[[1, 2], [3, 4]]] [[1, 2, 3]] [5, 6] }
-- output { [[[1, 3], [2, 4]]] [3, 4, 5] 72 }

def dot [n] (a: [n]i32) (b: [n]i32) = i32.sum (map2 (*) a b)

-- a parameter used first as an array, then as one of more dimensions (Futhark's tests/rearrange0.fut,
-- entrycopy1.fut), or passed to a function that wants more (fusion/horizontal-fusion-shared-input.fut)
entry ranks xsss ys zs : ([][][]i32, []i32, i32) = (map transpose xsss, flatten ys |> map (+ 2), dot zs (map (+ 1) zs))
