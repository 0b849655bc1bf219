-- for loops with a counter: a sum of squares (i64) and a power modulo a prime (i32).
-- ==
-- input { 0i64 1i32 }
-- output { 0i64 1i32 }
-- input { 10i64 2i32 }
-- output { 285i64 1024i32 }
-- input { 1000i64 3i32 }
-- output { 332833500i64 59049i32 }
-- input { 7i64 1000i32 }
-- output { 91i64 983200i32 }

entry main (n: i64) (x: i32): (i64, i32) =
  let s = loop acc = 0 for i < n do acc + i * i
  let p = loop acc = 1 for _i < 10 do acc * x % 1000007
  in (s, p)
