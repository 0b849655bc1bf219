-- Tuples: construction, tuple patterns in let and in parameters, projections .0 and .1, tuple results.
-- ==
-- input { 7i32 2i32 }
-- output { 20i32 2i32 1i32 5i32 8i32 }
-- input { -4i32 9i32 }
-- output { 90i32 -2i32 2i32 -13i32 -3i32 }
-- input { 0i32 0i32 }
-- output { 0i32 0i32 0i32 0i32 1i32 }

def swap (a: i32, b: i32): (i32, i32) = (b, a)

def divmod (a: i32) (b: i32): (i32, i32) = (a / b, a % b)

entry main (x: i32) (y: i32): (i32, i32, i32, i32, i32) =
  let p = (x, y)
  let (a, b) = swap p
  let t = (a * 10, divmod b 3)
  let (q, r) = t.1
  in (t.0, q, r, p.0 - p.1, (swap (x, x + 1)).0)
