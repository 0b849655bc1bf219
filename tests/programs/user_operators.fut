-- Qualified operator sections (i32.+), backquoted functions x `f` y and their sections,
-- user-defined operators (prefix and infix definitions, precedence from the leading
-- characters), and function composition >-> and <-<.
-- ==
-- input { [3i32, 1i32, 4i32] }
-- output { 8i32 4i32 11i32 17i32 5i32 [7i32, 5i32, 8i32] [16i32, 14i32, 17i32] [62i32, 22i32, 82i32]
--   [61i32, 21i32, 81i32] 2.5f32 true 3i32 8u8 }
-- input { empty([0]i32) }
-- output { 0i32 0i32 11i32 17i32 5i32 empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) 2.5f32
--   true 3i32 8u8 }

def (+^) (a: i32) (b: i32): i32 = a * 10 + b
def (x: i32) *^ (y: i32): i32 = x * y + 1
def (a: i32) <=> (b: i32): bool = a == b
def add3 (a: i32) (b: i32): i32 = a + b + 3

entry main (xs: []i32) =
  let s = reduce (i32.+) 0 xs
  let m = reduce (i32.max) 0 xs
  -- backquoted names bind more loosely than every symbolic operator
  let b = 2 `add3` 3 * 2
  -- *^ binds like *, so tighter than +^
  let c = 1 +^ 2 *^ 3
  let d = 1 `i32.max` 5
  let e = map (`add3` 1) xs
  let f = map (10 `add3`) xs
  let g = map ((+^ 1) >-> (*2)) xs
  let h = map ((+^ 1) <-< (*2)) xs
  let fl = reduce (f32.*) 1 [1, 2.5]
  -- <=> binds like <=: below +
  let cmp = 1 + 2 <=> 3
  let q = (i32.- 1) 4
  let bits = reduce (u8.&) 255 [12, 10]
  in (s, m, b, c, d, e, f, g, h, fl, cmp, q, bits)
