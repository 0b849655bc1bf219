-- Holes (`???`), as Futhark's tests/holes: a value of the type its uses decide, applied or not, that fails at
-- run time where it is evaluated, and only there.
-- ==
-- input { true 3i64 } output { [1, 2, 3] 3i64 }
-- input { false 3i64 } error: hole
-- input { true 0i64 } error: hole at

def unfinished (x: i64) : i64 = ??? x x

entry main (b: bool) (n: i64) : ([]i32, i64) =
  let xs = if b then [1, 2, 3] else ???
  in (xs, if n > 0 then n else unfinished n)
