-- Integer arithmetic on scalars: precedence, the four kinds of division and remainder, negation.
-- / and % round toward negative infinity, // and %% toward zero.
-- ==
-- input { 7i32 2i32 }
-- output { 10i32 3i32 1i32 3i32 1i32 7i32 }
-- input { -7i32 2i32 }
-- output { -4i32 -4i32 1i32 -3i32 -1i32 -7i32 }
-- input { 7i32 -2i32 }
-- output { 2i32 -4i32 -1i32 -3i32 1i32 35i32 }
-- input { -7i32 -2i32 }
-- output { -12i32 3i32 -1i32 3i32 -1i32 -35i32 }
-- input { 0i32 5i32 }
-- output { 9i32 0i32 0i32 0i32 0i32 0i32 }
-- input { 100i32 7i32 }
-- output { 113i32 14i32 2i32 14i32 2i32 -400i32 }
-- input { 1i32 0i32 }
-- error: [Dd]ivision by zero

entry main (a: i32) (b: i32): (i32, i32, i32, i32, i32, i32) =
  (a + b * 2 - 1, a / b, a % b, a // b, a %% b, -a * (b - 3))
