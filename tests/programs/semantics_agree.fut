-- Where the interpreter and compiled programs once disagreed: a failed size coercion is an error (also in a
-- function that is not an entry point, and inside a map); integer `**` with a negative exponent is an error,
-- as in Futhark, and so is a negative exponent inside a map; a float converted to an integer as on x86 (NaN
-- and the infinities give the least value of the 32 or 64 bits converted through: float_to_int.fut).
-- ==
-- entry: coerce
-- input { [1i32, 2i32] }
-- output { [2i32, 3i32] }
-- input { [1i32, 2i32, 3i32] }
-- error: semantics_agree.fut:41:36: .*Cannot coerce an array

-- ==
-- entry: coerce_rows
-- input { [[1i32, 2i32], [3i32, 4i32]] }
-- output { [3i32, 7i32] }
-- input { [[1i32, 2i32, 3i32]] }
-- error: semantics_agree.fut:46:77: .*Cannot coerce an array

-- ==
-- entry: power
-- input { 3i32 5i32 }
-- output { 243i32 }
-- input { 2i32 -1i32 }
-- error: semantics_agree.fut:48:40: .*Negative exponent in integer power

-- ==
-- entry: powers
-- input { [1i64, 2i64, 3i64] 40i64 }
-- output { [1i64, 1099511627776i64, -6289078614652622815i64] }
-- input { [1i64, 2i64] -2i64 }
-- error: semantics_agree.fut:50:57: .*Negative exponent in integer power

-- ==
-- entry: to_int
-- input { [f32.nan, f32.inf, -f32.inf, -3.7f32, 300.5f32, 70000.9f32] }
-- output { [-2147483648i32, -2147483648i32, -2147483648i32, -3i32, 300i32, 70000i32]
--          [0u8, 0u8, 0u8, 253u8, 44u8, 112u8] -2147483648i32 -9223372036854775808i64 0u8 }
-- input { empty([0]f32) }
-- output { empty([0]i32) empty([0]u8) -2147483648i32 -9223372036854775808i64 0u8 }

def take2 (xs: []i32): [2]i32 = xs :> [2]i32

entry coerce (xs: []i32) = map (+ 1) (take2 xs)

-- (each row has the size the coercion claims)
entry coerce_rows [n][m] (xss: [n][m]i32): [n]i32 = map (\xs -> i32.sum (xs :> [2]i32)) xss

entry power (x: i32) (y: i32): i32 = x ** y

entry powers (xs: []i64) (y: i64): []i64 = map (\x -> x ** y) xs

entry to_int (xs: []f32): ([]i32, []u8, i32, i64, u8) =
  let nan = f32.sqrt (-1f32)
  in (map i32.f32 xs, map u8.f32 xs, i32.f32 nan, i64.f32 (1f32 / 0f32), u8.f32 nan)

-- A division by zero on the host (not in a kernel) names its position too.
-- ==
-- entry: remainder
-- input { 7i32 2i32 }
-- output { 1i32 3i32 }
-- input { 7i32 0i32 }
-- error: semantics_agree.fut:64:52: .*[Dd]ivision by zero

entry remainder (x: i32) (y: i32): (i32, i32) = (x % y, x / y)
