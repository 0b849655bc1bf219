-- Nested if expressions, as a scalar function mapped over an array and at the top level.
-- ==
-- input { [-5i32, 0i32, 3i32, 10i32, 99i32, -1i32] }
-- output { [-1i32, 0i32, 1i32, 2i32, 2i32, -1i32] -6i32 }
-- input { [4i32, -4i32] }
-- output { [1i32, -1i32] 0i32 }

def classify (x: i32): i32 =
  if x < 0 then -1 else if x == 0 then 0 else if x < 10 then 1 else 2

entry main [n] (xs: [n]i32): ([n]i32, i32) =
  (map classify xs, if n > 3 then xs[0] + xs[n - 1] else 0)
