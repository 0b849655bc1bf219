-- Operator precedence and associativity: ** binds tighter than * which binds tighter than +; - is left
-- associative; << binds looser than +; comparisons looser than arithmetic; * and % are left associative.
-- ==
-- input { 7i32 2i32 3i32 }
-- output { 22i32 27i32 32i32 false 6i32 2i32 12i32 }
-- input { -5i32 4i32 -1i32 }
-- output { 1i32 1i32 32i32 false 4i32 -8i32 0i32 }

entry main (a: i32) (b: i32) (c: i32): (i32, i32, i32, bool, i32, i32, i32) =
  (a + b * c ** 2 - a / b, (a + b) * c, 1 << 2 + 3, a < b == (c > 0), (a & b) | (c ^ a), a - b - c,
   a * b % 5 * c)
