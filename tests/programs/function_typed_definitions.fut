-- A definition whose type is a function type, written or a `type^` abbreviation of one, takes the parameters
-- that type gives (Futhark's rosettacode/life.fut: `def bint : bool -> i32 = i32.bool`); a named parameter of
-- such a type may size the result (`(n: i64) -> [n]i32`).
-- ==
-- input { [true, false, true] 3i64 } output { 2 [0, 0, 0] 3i64 }

def bint : bool -> i32 = i32.bool

type^ maker = (n: i64) -> [n]i32

def zeros : maker = \n -> replicate n 0

type^ counter = (k: i64) -> [k]i32 -> i64

def count : counter = \k (xs: [k]i32) -> length xs

entry main (bs: []bool) (n: i64) = (i32.sum (map bint bs), zeros n, count n (zeros n))
