-- Type abbreviations whose sizes are expressions of their size parameters (Futhark's tests/issue2219.fut:
-- `type Circuit [n] = [n][2 * n]i8`): computed where the type is used, from the sizes given.
-- ==
-- input { 3i64 } output { 3i64 6i64 [0i8, 0i8, 0i8, 0i8, 0i8, 0i8, 0i8] }

type circuit [n] = [n][2 * n]i8
type padded [n] = [n + 1]i8

def create (n: i64) : *circuit [n] = map (\_ -> replicate (2 * n) 0i8) (iota n)

def pad [n] (row: [n]i8) : padded [n] = row ++ [0i8]

entry main (n: i64) =
  let c = create n
  let p: padded [2 * n] = pad c[0]
  in (length c, length c[0], p)

-- ==
-- entry: constant_sizes
-- input { [[1u64, 2u64, 3u64], [4u64, 5u64, 6u64]] } output { [[0u64, 0u64, 0u64], [4u64, 5u64, 6u64]] }

-- A size written as an expression of literals is its value (Futhark's tests/issue2276.fut: [2 + 1] and [3] agree).
entry constant_sizes [m] (dest: *[m][2 + 1]u64) : *[m][2 + 1]u64 =
  scatter dest [0] [[0, 0, 0] :> [3]u64]
